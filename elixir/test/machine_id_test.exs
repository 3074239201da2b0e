defmodule Nonceforge.MachineIdTest do
  # Nonceforge.MachineId as NoNoncense 2.0 users start it: a child in the
  # supervision tree with a strategy and instances. Leases against a real Redis
  # and a real PostgreSQL (through a stand-in Ecto repo), a strategy of the
  # test's own to lose leases on demand, telemetry through a stand-in
  # :telemetry. Not async: trees and stores are named globally.
  use ExUnit.Case, async: false
  import Nonceforge.Test.Eventually
  alias Nonceforge.Errors.{DisabledError, UninitializedError}
  alias Nonceforge.MachineId
  alias Nonceforge.MachineId.Strategy.{EnvironmentVariable, HostIdentifiers, RedisLease, SqlLease}
  alias Nonceforge.Test.Stores

  @moduletag timeout: 120_000

  defmodule Flaky do
    # A strategy of the test's own: ids from a counter, renewals answered as
    # the test says (an Agent), every call recorded.
    use Nonceforge.MachineId.Strategy

    def start,
      do: Agent.start_link(fn -> %{next: 40, renew: :ok, calls: []} end, name: __MODULE__)

    def set(key, value), do: Agent.update(__MODULE__, &Map.put(&1, key, value))
    def calls, do: Agent.get(__MODULE__, &Enum.reverse(&1.calls))

    defp record(call),
      do: Agent.update(__MODULE__, &Map.update!(&1, :calls, fn c -> [call | c] end))

    @impl true
    def acquire(_duration, opts) do
      id = Agent.get_and_update(__MODULE__, fn s -> {s.next, %{s | next: s.next + 1}} end)
      record({:acquire, id})
      {:ok, id, {:lease, id}, Keyword.get(opts, :ttl, 600)}
    end

    @impl true
    def renew(lease, _duration, opts) do
      record({:renew, lease})

      case Agent.get(__MODULE__, & &1.renew) do
        :ok -> {:ok, lease, Keyword.get(opts, :ttl, 600)}
        :lost -> {:error, :lost, :taken}
        :retry -> {:error, :retry, :timeout}
      end
    end

    @impl true
    def release(lease, _opts), do: record({:release, lease})

    @impl true
    def deterministic?, do: false
  end

  defmodule Repo do
    # Stands in for an Ecto repo: SqlLease reads only config/0.
    def config, do: :persistent_term.get({__MODULE__, :config})
  end

  defp start_tree(opts),
    do: start_supervised({MachineId, opts}, id: Keyword.get(opts, :name, MachineId))

  test "EnvironmentVariable: the id from the variable, every instance initialized before start returns" do
    System.put_env("NONCEFORGE_TEST_POD", "nonce-worker-12")

    {:ok, _} =
      start_tree(
        name: :env_tree,
        strategy: EnvironmentVariable,
        strategy_opts: [variable_name: "NONCEFORGE_TEST_POD"],
        instances: [[name: :env_a], [name: :env_b, epoch: 1_609_459_200_000]],
        enable_conflict_guard?: false
      )

    assert MachineId.machine_id(:env_tree) == 12
    assert MachineId.lease_metrics(:env_tree) == []
    assert Nonceforge.machine_id(:env_a) == 12 and Nonceforge.machine_id(:env_b) == 12
    assert %{machine_id: 12} = Nonceforge.decompose(:env_a, Nonceforge.nonce(:env_a, 96))
  end

  test "start-up fails when no id can be had in :acquire_timeout: logged, a :timeout loss" do
    System.delete_env("NONCEFORGE_TEST_UNSET")
    Process.flag(:trap_exit, true)
    me = self()

    log =
      ExUnit.CaptureLog.capture_log(fn ->
        assert {:error, {{:shutdown, {:failed_to_start_child, _, :lease_acquisition_failed}}, _}} =
                 start_tree(
                   name: :env_bad,
                   strategy: EnvironmentVariable,
                   strategy_opts: [variable_name: "NONCEFORGE_TEST_UNSET"],
                   acquire_timeout: 0,
                   on_lease_lost: fn reason -> send(me, {:lost, reason}) end
                 )
      end)

    assert log =~ "env var NONCEFORGE_TEST_UNSET not found"
    assert_receive {:lost, :timeout}
  end

  test "bad options are refused up front, naming the option" do
    for {opts, message} <- [
          {[], ~r/:strategy must be a module/},
          {[strategy: String], ~r/:strategy must be a module/},
          {[strategy: Flaky, instances: []], ~r/:instances must be a non-empty list/},
          {[strategy: Flaky, instances: [[machine_id: 3]]], ~r/remove :machine_id/},
          {[strategy: Flaky, instances: [[], []]], ~r/same name/},
          {[strategy: Flaky, renew_interval: 0], ~r/:renew_interval must be positive/},
          {[strategy: Flaky, min_ttl: -1], ~r/:min_ttl must be positive/},
          {[strategy: Flaky, acquire_timeout: :soon], ~r/:acquire_timeout/},
          {[strategy: Flaky, on_lease_lost: fn -> :ok end],
           ~r/:on_lease_lost must be a function of one argument/},
          {[strategy: Flaky, colour: :red], ~r/unknown option/}
        ] do
      assert_raise ArgumentError, message, fn -> MachineId.start_link(opts) end
    end
  end

  test "HostIdentifiers reads the node list as a set, as NoNoncense does; ordered: true in the order given" do
    list = ["192.0.2.77", :zz@nohost, "127.0.0.1"]
    # Sorted in term order: atoms first, then strings: [:zz@nohost, "127.0.0.1", "192.0.2.77"].
    assert HostIdentifiers.id!(node_list: list) == 1
    assert HostIdentifiers.id!(node_list: Enum.reverse(list)) == 1
    assert HostIdentifiers.id!(node_list: list, ordered: true) == 2
    assert MachineId.id!({:node_list, list}) == 1
    assert MachineId.id!({:node_list, list, ordered: true}) == 2

    assert_raise RuntimeError, "machine ID could not be determined", fn ->
      HostIdentifiers.id!(node_list: ["192.0.2.1"])
    end

    assert "127.0.0.1" in HostIdentifiers.host_identifiers()
  end

  test "a lost lease disables every instance, calls on_lease_lost, and a new id reinitializes them" do
    {:ok, _} = Flaky.start()
    Flaky.set(:renew, :ok)
    test = self()
    Process.register(test, :telemetry_listener)

    {:ok, _} =
      start_tree(
        name: :flaky_tree,
        strategy: Flaky,
        strategy_opts: [ttl: 600],
        renew_interval: 100,
        # Below NoNoncense's 30 s minimum, which this test does not need.
        min_ttl: 100,
        # Holds the manager (it runs the callback) until the test has looked.
        on_lease_lost: fn reason ->
          send(test, {:lost, reason})
          receive do: (:resume -> :ok)
        end,
        instances: [[name: :flaky_a], [name: :flaky_b]],
        enable_conflict_guard?: false
      )

    assert MachineId.machine_id(:flaky_tree) == 40

    assert_receive {:telemetry, [:nonceforge, :machine_id, :lease, :acquire, :stop],
                    %{ttl_ms: 600}, %{result: :ok, source: :initial}}

    # Renewals keep it past its ttl.
    started = System.monotonic_time(:millisecond)

    assert eventually(fn ->
             System.monotonic_time(:millisecond) - started > 900 and
               Enum.count(Flaky.calls(), &match?({:renew, _}, &1)) >= 3
           end)

    assert Nonceforge.machine_id(:flaky_a) == 40 and
             byte_size(Nonceforge.nonce(:flaky_b, 64)) == 8

    assert {:renew, {:lease, 40}} in Flaky.calls()

    assert_receive {:telemetry, [:nonceforge, :machine_id, :lease, :renew, :stop],
                    %{ttl_ms: 600, duration: _}, %{result: :ok, source: :scheduled}}

    Flaky.set(:renew, :lost)
    assert_receive {:lost, :taken}, 2000

    assert_receive {:telemetry, [:nonceforge, :machine_id, :lease, :lost], %{remaining_ttl_ms: _},
                    %{reason: :taken}}

    Flaky.set(:renew, :ok)
    # Disabled until the next id comes (the manager acquires again once on_lease_lost returns).
    assert_raise DisabledError, "instance flaky_a is disabled", fn ->
      Nonceforge.nonce(:flaky_a, 64)
    end

    send(Process.whereis(Module.concat(:flaky_tree, :LeaseManager)), :resume)
    assert eventually(fn -> {:release, {:lease, 40}} in Flaky.calls() end)
    assert eventually(fn -> MachineId.machine_id(:flaky_tree) == 41 end)
    assert Nonceforge.machine_id(:flaky_a) == 41 and Nonceforge.machine_id(:flaky_b) == 41
    assert byte_size(Nonceforge.nonce(:flaky_a, 128)) == 16
  after
    Process.whereis(:telemetry_listener) && Process.unregister(:telemetry_listener)
  end

  test "renewals that fail past the ttl expire the lease: instances disabled, reason :expired" do
    {:ok, _} = Flaky.start()
    Flaky.set(:renew, :retry)
    test = self()

    {:ok, _} =
      start_tree(
        name: :expiring_tree,
        strategy: Flaky,
        strategy_opts: [ttl: 300],
        renew_interval: 50,
        min_ttl: 100,
        on_lease_lost: fn reason -> send(test, {:lost, reason}) end,
        instances: [[name: :expiring]],
        enable_conflict_guard?: false
      )

    Process.register(self(), :telemetry_listener)
    assert byte_size(Nonceforge.nonce(:expiring, 64)) == 8

    assert_receive {:telemetry, [:nonceforge, :machine_id, :lease, :retry],
                    %{attempt: 1, delay_ms: _}, %{operation: :renew, reason: :timeout}},
                   5000

    assert_receive {:lost, :expired}, 5000
    assert_raise DisabledError, fn -> Nonceforge.nonce(:expiring, 64) end
  after
    Process.whereis(:telemetry_listener) && Process.unregister(:telemetry_listener)
  end

  test "RedisLease takes every Redis URL form and refuses the others by name" do
    for url <- ["postgres://u@h/db", "etcd://h:2379", "redisx://h:1", nil] do
      assert {:error, msg} = RedisLease.acquire(10_000, url: url)
      assert msg =~ "redis+cluster://", msg
    end

    # Accepted (then refused by the lease crate for its own reason: nothing listens).
    for url <- [
          "redis+cluster://127.0.0.1:1",
          "redis+sentinel://127.0.0.1:1/m",
          "rediss://127.0.0.1:1"
        ] do
      assert {:error, msg} = RedisLease.acquire(10_000, url: url, connect_timeout: 200)
      refute msg =~ "strategy_opts :url", msg
    end
  end

  test "StatefulSet (Lease with :id_from): two pods with one index take turns (the second waits, saying so), no value repeats" do
    store = Stores.redis()
    System.put_env("NF_TEST_POD_NAME", "nonces-3")

    try do
      opts = fn name, inst ->
        [
          name: name,
          strategy: Nonceforge.MachineId.Strategy.StatefulSet,
          strategy_opts: [
            url: store.url,
            ttl: 1000,
            namespace: "pods",
            id_from: "env:NF_TEST_POD_NAME"
          ],
          instances: [[name: inst]],
          enable_conflict_guard?: false
        ]
      end

      {:ok, _} = start_tree(opts.(:pod_a, :pod_inst_a))
      assert MachineId.machine_id(:pod_a) == 3
      draw = fn inst -> for _ <- 1..1000, do: Nonceforge.nonce(inst, 96) end
      first = draw.(:pod_inst_a)
      me = self()

      log =
        ExUnit.CaptureLog.capture_log(fn ->
          # The second pod's tree starts in a process of its own: its start
          # blocks while it waits for the id.
          pod_b =
            spawn(fn ->
              send(me, {:pod_b, MachineId.start_link(opts.(:pod_b, :pod_inst_b))})
              receive do: (:stop -> :ok)
            end)

          refute_receive {:pod_b, _}, 500
          second_of_a = draw.(:pod_inst_a)
          :ok = stop_supervised(:pod_a)
          assert_raise DisabledError, fn -> Nonceforge.nonce(:pod_inst_a, 96) end
          assert_receive {:pod_b, {:ok, _}}, 10_000
          assert MachineId.machine_id(:pod_b) == 3
          values = first ++ second_of_a ++ draw.(:pod_inst_b)
          assert length(Enum.uniq(values)) == 3000
          ref = Process.monitor(pod_b)
          send(pod_b, :stop)
          assert_receive {:DOWN, ^ref, _, _, _}, 5000
        end)

      assert length(String.split(log, "is held by another member")) == 2, log
      assert log =~ "machine id 3 (from env:NF_TEST_POD_NAME)"

      # What is refused, by rule.
      alias Nonceforge.MachineId.Strategy.Lease, as: L
      assert {:error, msg} = L.acquire(0, url: store.url, id_from: "pod-index")
      assert msg =~ ":id_from"
      assert {:error, msg} = L.acquire(0, url: store.url, id_from: "hostname", ids: 3)
      assert msg =~ ":ids"
      assert {:error, msg} = L.acquire(0, url: store.url, id_wait: 10)
      assert msg =~ ":id_from"
      assert {:error, msg} = L.acquire(0, url: store.url, id_from: :env)
      assert msg =~ ":id_from"

      # StatefulSet reads POD_INDEX unless told otherwise; no variable, no id.
      alias Nonceforge.MachineId.Strategy.StatefulSet, as: S
      assert S.default_id_from() == "env:POD_INDEX"
      System.delete_env("POD_INDEX")
      assert {:error, msg} = S.acquire(0, url: store.url, namespace: "pods2")
      assert msg =~ "POD_INDEX", msg
      assert {:error, msg} = S.acquire(0, url: store.url, ids: 3)
      assert msg =~ ":ids"
      System.put_env("POD_INDEX", "17")
      assert {:ok, 17, lease, _ttl} = S.acquire(0, url: store.url, namespace: "pods2")
      :ok = S.release(lease, [])
    after
      System.delete_env("NF_TEST_POD_NAME")
      System.delete_env("POD_INDEX")
      Stores.stop(store)
    end
  end

  test "RedisLease: two trees on one Redis get different ids through the lease crate; stopping releases" do
    store = Stores.redis()

    try do
      opts = fn name, inst ->
        [
          name: name,
          strategy: RedisLease,
          strategy_opts: [url: store.url, ttl: 2000],
          instances: [[name: inst]],
          enable_conflict_guard?: false
        ]
      end

      {:ok, _} = start_tree(opts.(:redis_a, :redis_inst_a))
      {:ok, _} = start_tree(opts.(:redis_b, :redis_inst_b))
      a = MachineId.machine_id(:redis_a)
      b = MachineId.machine_id(:redis_b)
      assert a != b
      assert Nonceforge.machine_id(:redis_inst_a) == a
      # The held lease's figures, as the fleet's series.
      metrics = MachineId.lease_metrics(:redis_a)
      assert Enum.find(metrics, &(&1.name == "nonceforge_lease_machine_id")).value == a

      assert Enum.find(
               metrics,
               &(&1.name == "nonceforge_lease_state" and &1.labels == %{state: "held"})
             ).value ==
               1.0

      assert length(metrics) >= 23
      # A fleet of mixed languages on one store: the CLI sees both leases, in the
      # records every face uses, and a CLI member that leases beside them gets a third id.
      cli =
        System.get_env("NONCEFORGE_CLI", Path.expand("../../target/release/nonceforge", __DIR__))

      assert File.exists?(cli), "the nonceforge CLI is not built at #{cli}"
      {out, 0} = System.cmd(cli, ["lease", "status", "--json", "--backend", store.url])

      # One JSON object a line (no JSON library on OTP 25 / Elixir 1.14: the two fields by pattern).
      records = fn out ->
        for line <- String.split(out, "\n", trim: true) do
          [_, id] = Regex.run(~r/"machine_id":(\d+)/, line)
          [_, left] = Regex.run(~r/"expires_in_ms":(null|\d+)/, line)
          {String.to_integer(id), left != "null"}
        end
      end

      held = for {id, true} <- records.(out), do: id

      assert Enum.sort(held) == Enum.sort([a, b])

      {_, 0} =
        System.cmd(cli, ["gen", "counter", "--bits", "64", "-n", "1", "--lease", store.url],
          stderr_to_stdout: true
        )

      {out, 0} = System.cmd(cli, ["lease", "status", "--json", "--backend", store.url])
      # The CLI member released its id when it was done; three ids were handed out.
      assert length(records.(out)) == 3
      Process.sleep(2500)
      assert byte_size(Nonceforge.sortable_nonce(:redis_inst_b, 96)) == 12
      :ok = stop_supervised(:redis_a)
      assert_raise DisabledError, fn -> Nonceforge.nonce(:redis_inst_a, 64) end
      # The id came free: a third tree takes it, above the last one's floor.
      {:ok, _} =
        start_tree(opts.(:redis_c, :redis_inst_c) |> put_in([:strategy_opts, :ids], a..a))

      assert MachineId.machine_id(:redis_c) == a
    after
      Stores.stop(store)
    end
  end

  test "RedisLease: the store losing the lease disables the instances at once and on_lease_lost is told" do
    store = Stores.redis()
    test = self()

    try do
      {:ok, _} =
        start_tree(
          name: :redis_lost,
          strategy: RedisLease,
          strategy_opts: [url: store.url, ttl: 1500],
          on_lease_lost: fn reason -> send(test, {:lost, reason}) end,
          instances: [[name: :redis_lost_inst]],
          enable_conflict_guard?: false
        )

      assert byte_size(Nonceforge.nonce(:redis_lost_inst, 64)) == 8
      {_, 0} = System.cmd("redis-cli", ["-p", "#{store.port}", "flushall"])
      assert_receive {:lost, reason}, 5000
      # The lease crate's reason (its renewal finds the store's incarnation
      # gone), unless the manager's own timer ran out first on a busy machine.
      assert reason in [:store_lost_data, :expired]
      assert_raise DisabledError, fn -> Nonceforge.nonce(:redis_lost_inst, 64) end
    after
      Stores.stop(store)
    end
  end

  test "SqlLease: an id from PostgreSQL, connection settings from the repo's config/0" do
    store = Stores.postgres()

    try do
      :persistent_term.put({Repo, :config},
        hostname: "127.0.0.1",
        port: store.port,
        username: "postgres",
        database: "postgres"
      )

      {:ok, _} =
        start_tree(
          name: :sql_tree,
          strategy: SqlLease,
          strategy_opts: [repo: Repo, ttl: 2000],
          instances: [[name: :sql_inst]],
          enable_conflict_guard?: false
        )

      id = MachineId.machine_id(:sql_tree)
      assert Nonceforge.machine_id(:sql_inst) == id
      assert byte_size(Nonceforge.nonce(:sql_inst, 128)) == 16
      assert {:error, reason} = SqlLease.acquire(1000, repo: String)
      assert reason =~ "module with config/0"
    after
      Stores.stop(store)
    end
  end

  test "errors as NoNoncense raises them" do
    assert_raise UninitializedError, "instance never is not initialized", fn ->
      raise UninitializedError, :never
    end

    assert_raise DisabledError, "instance off is disabled", fn ->
      raise DisabledError, :off
    end

    :ok = Nonceforge.init(name: :to_disable, machine_id: 3)
    Nonceforge.disable(:to_disable)

    assert_raise DisabledError, "instance to_disable is disabled", fn ->
      Nonceforge.nonce(:to_disable, 64)
    end
  end

  test "ConflictGuard understands NoNoncense's message and ignores what it does not know" do
    test = self()
    Process.register(test, :telemetry_listener)

    {:ok, guard} =
      start_supervised(
        {Nonceforge.ConflictGuard,
         name: :guard_compat, machine_id: fn -> 9 end, on_conflict: fn -> send(test, :told) end}
      )

    # An older peer with our id, in NoNoncense's format: this node is the newer, it is told.
    GenServer.cast(guard, {:id_from, :old@host, %{machine_id: 9, init_at: 0}})
    assert_receive :told

    assert_receive {:telemetry, [:nonceforge, :machine_id, :conflict_guard, :conflict], _,
                    %{resolution: :local_node}}

    # Unknown messages: logged, the guard lives on.
    ExUnit.CaptureLog.capture_log(fn ->
      GenServer.cast(guard, {:something, :else})
      send(guard, :stray)
      GenServer.cast(guard, {:id_from, :x@y, "nine", :soon})
      Process.sleep(50)
    end)

    assert Process.alive?(guard)
    GenServer.cast(guard, {:id_from, :new@host, 9, System.system_time(:microsecond) + 1_000_000})
    refute_receive :told, 100
  after
    Process.whereis(:telemetry_listener) && Process.unregister(:telemetry_listener)
  end

  test "import Nonceforge compiles beside Kernel.inspect" do
    [{mod, _}] =
      Code.compile_string("""
      defmodule Nonceforge.MachineIdTest.Importer do
        import Nonceforge
        def run, do: {inspect(:ok), byte_size(nonce(:imported, 64))}
      end
      """)

    :ok = Nonceforge.init(name: :imported, machine_id: 4)
    assert {":ok", 8} = mod.run()
  end
end
