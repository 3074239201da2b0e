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
      assert eventually(fn -> :rpc.call(other, Node, :list, []) |> is_list() end)
      Process.sleep(300)
      assert :rpc.call(other, Nonceforge, :enabled?, []) == true
      assert Nonceforge.enabled?(:guarded2)
    after
      kill(port)
      GenServer.stop(guard)
    end
  end
end
