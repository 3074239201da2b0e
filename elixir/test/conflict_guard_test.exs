defmodule Nonceforge.ConflictGuardTest do
  # Two named nodes on loopback (epmd on 127.0.0.1): this test's VM and another
  # BEAM. When the other node connects with the same machine id, the newer
  # instance — the other node's — is disabled; different ids leave both alone.
  use ExUnit.Case, async: false
  import Nonceforge.Test.Eventually

  @moduletag timeout: 120_000

  setup_all do
    {_, 0} = System.cmd("epmd", ["-daemon"], env: [{"ERL_EPMD_ADDRESS", "127.0.0.1"}])

    unless Node.alive?() do
      {:ok, _} = Node.start(:"nonceforge_test@127.0.0.1", :longnames)
    end

    Node.set_cookie(:nonceforge_test_cookie)
    :ok
  end

  defp other_node(name, machine_id) do
    script = """
    :ok = Nonceforge.init(machine_id: #{machine_id})
    {:ok, _} = Nonceforge.ConflictGuard.start_link([])
    true = Node.connect(#{inspect(Node.self())})
    IO.puts("up")
    Process.sleep(:infinity)
    """

    args = ["--name", "#{name}@127.0.0.1", "--cookie", "nonceforge_test_cookie"]
    {port, _} = Nonceforge.Test.Beam.start(script, args)
    {port, :"#{name}@127.0.0.1"}
  end

  defp kill(port), do: Nonceforge.Test.Beam.kill(port)

  test "a clash disables the newer node's instance; the older one goes on" do
    :ok = Nonceforge.init(name: :guarded, machine_id: 9)
    me = self()

    {:ok, guard} =
      Nonceforge.ConflictGuard.start_link(
        name: Nonceforge.ConflictGuard,
        instance: :guarded,
        on_conflict: fn node -> send(me, {:conflict, node}) end
      )

    {port, other} = other_node("clash", 9)

    try do
      assert eventually(fn -> :rpc.call(other, Nonceforge, :enabled?, []) == false end)
      e = assert_raise ErlangError, fn -> :erpc.call(other, Nonceforge, :nonce, [64]) end
      assert {:exception, %Nonceforge.Errors.DisabledError{}, _} = e.original
      assert Nonceforge.enabled?(:guarded)
      assert byte_size(Nonceforge.nonce(:guarded, 64)) == 8
      refute_received {:conflict, _}
    after
      kill(port)
      GenServer.stop(guard)
    end
  end

  test "different machine ids: both go on" do
    :ok = Nonceforge.init(name: :guarded2, machine_id: 10)

    {:ok, guard} =
      Nonceforge.ConflictGuard.start_link(name: Nonceforge.ConflictGuard, instance: :guarded2)

    {port, other} = other_node("noclash", 11)

    try do
      # Both guards have compared (each saw the other's announcement): neither stopped.
      assert eventually(fn -> MapSet.size(Nonceforge.ConflictGuard.state(guard).seen) == 1 end)

      assert eventually(fn ->
               s = :rpc.call(other, Nonceforge.ConflictGuard, :state, [])
               is_map(s) and MapSet.size(s.seen) == 1
             end)

      assert :rpc.call(other, Nonceforge, :enabled?, []) == true
      assert Nonceforge.enabled?(:guarded2)
    after
      kill(port)
      GenServer.stop(guard)
    end
  end

  # A node that plays NoNoncense exactly (its guard restated from NoNoncense's
  # source: registered as NoNoncense.MachineId.ConflictGuard, announces its
  # state map on nodeup, the newer — `init_at >=` the other's — calls
  # on_conflict), in 2.0's microseconds or 1.x's milliseconds, started an hour
  # before or after our guard. It reports every decision to this test.
  defp nononcense_node(name, machine_id, unit, offset_s) do
    now = System.system_time(unit)
    per_s = if unit == :microsecond, do: 1_000_000, else: 1000
    init_at = now + offset_s * per_s
    listener = {:cg_test_listener, Node.self()}

    script = """
    defmodule NoNoncense.MachineId.ConflictGuard do
      use GenServer
      def start_link(state), do: GenServer.start_link(__MODULE__, state, name: __MODULE__)
      def init(state) do
        :net_kernel.monitor_nodes(true, [])
        {:ok, state}
      end
      def handle_info({:nodeup, node}, state) do
        GenServer.cast({state.name, node}, {:id_from, Node.self(), %{state | machine_id: state.machine_id.()}})
        {:noreply, state}
      end
      def handle_info(_, state), do: {:noreply, state}
      def handle_cast({:id_from, _node, %{machine_id: others_id, init_at: others_init_at}}, state) do
        decision =
          cond do
            state.machine_id.() != others_id -> :different
            state.init_at >= others_init_at -> state.on_conflict.(); :local
            true -> :remote
          end
        send(#{inspect(listener)}, {:nononcense_decided, decision, others_init_at})
        {:noreply, state}
      end
    end
    {:ok, _} = NoNoncense.MachineId.ConflictGuard.start_link(%{
      name: NoNoncense.MachineId.ConflictGuard,
      machine_id: fn -> #{machine_id} end,
      init_at: #{init_at},
      on_conflict: fn -> send(#{inspect(listener)}, :nononcense_resolves) end
    })
    true = Node.connect(#{inspect(Node.self())})
    IO.puts("up")
    Process.sleep(:infinity)
    """

    args = ["--name", "#{name}@127.0.0.1", "--cookie", "nonceforge_test_cookie"]
    {port, _} = Nonceforge.Test.Beam.start(script, args)
    port
  end

  for {version, unit} <- [{"2.0", :microsecond}, {"1.x", :millisecond}] do
    test "beside a NoNoncense #{version} node started before ours: ours resolves the clash" do
      Process.register(self(), :cg_test_listener)
      me = self()

      {:ok, guard} =
        Nonceforge.MachineId.ConflictGuard.start_link(
          machine_id: 21,
          on_conflict: fn -> send(me, :we_resolve) end
        )

      port = nononcense_node("nn_older_#{unquote(unit)}", 21, unquote(unit), -3600)

      try do
        assert_receive :we_resolve, 30_000
        # The NoNoncense node decided it is the older one, on every message it got.
        assert_receive {:nononcense_decided, :remote, _}, 30_000
        refute_received :nononcense_resolves

        if unquote(unit) == :millisecond,
          do: assert_receive({:nononcense_decided, :remote, _}, 30_000)

        refute_received :nononcense_resolves
        refute_received :we_resolve
      after
        kill(port)
        GenServer.stop(guard)
        Process.unregister(:cg_test_listener)
      end
    end

    test "beside a NoNoncense #{version} node started after ours: it resolves the clash" do
      Process.register(self(), :cg_test_listener)
      me = self()

      {:ok, guard} =
        Nonceforge.MachineId.ConflictGuard.start_link(
          machine_id: 22,
          on_conflict: fn -> send(me, :we_resolve) end
        )

      port = nononcense_node("nn_newer_#{unquote(unit)}", 22, unquote(unit), 3600)

      try do
        assert_receive :nononcense_resolves, 30_000
        # Ours compared too (the peer's announcement reached it through
        # NoNoncense's name) and stayed.
        assert eventually(fn ->
                 MapSet.size(Nonceforge.MachineId.ConflictGuard.state(guard).seen) == 1
               end)

        refute_received :we_resolve

        # In the unit the node speaks: microseconds to 2.0; to 1.x, also milliseconds.
        units =
          for _ <- 1..if(unquote(unit) == :millisecond, do: 2, else: 1) do
            assert_receive {:nononcense_decided, _, at}, 30_000
            if at < 100_000_000_000_000, do: :ms, else: :us
          end

        assert units == if(unquote(unit) == :millisecond, do: [:us, :ms], else: [:us])
      after
        kill(port)
        GenServer.stop(guard)
        Process.unregister(:cg_test_listener)
      end
    end
  end

  test "NoNoncense's rules for starting one: a machine id is required; 1.x's child spec" do
    assert_raise ArgumentError, "machine ID is required as a literal or getter/0", fn ->
      Nonceforge.MachineId.ConflictGuard.start_link([])
    end

    # NoNoncense 1.x's README: {NoNoncense.MachineId.ConflictGuard, [machine_id: id]}, renamed.
    {:ok, sup} =
      Supervisor.start_link(
        [{Nonceforge.MachineId.ConflictGuard, [machine_id: 5, on_conflict: fn -> :ok end]}],
        strategy: :one_for_one
      )

    assert %{machine_id: getter, name: Nonceforge.MachineId.ConflictGuard} =
             Nonceforge.MachineId.ConflictGuard.state()

    assert getter.() == 5
    # It answers to NoNoncense's name on this node too.
    assert is_pid(Process.whereis(NoNoncense.MachineId.ConflictGuard))
    Supervisor.stop(sup)
    assert eventually(fn -> Process.whereis(NoNoncense.MachineId.ConflictGuard) == nil end)
  end
end
