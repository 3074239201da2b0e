defmodule Nonceforge.NoNoncenseCompatTest do
  # NoNoncense 2.0's own test files, restated in our words against Nonceforge in
  # its default (NoNoncense) mode: what a NoNoncense user's suite checks after
  # the rename — messages, exception types, module and process names, setup
  # calls, the lease lifecycle and its log lines, the ciphers' bytes. Where
  # NoNoncense's tests read its internals (:persistent_term records, :atomics
  # counters) there is no counterpart; the effect they stand for is checked.
  use ExUnit.Case, async: false
  import Bitwise
  import ExUnit.CaptureLog
  import Nonceforge.Test.Eventually

  alias Nonceforge.Errors.{DisabledError, UninitializedError}
  alias Nonceforge.MachineId.{LeaseCache, LeaseManager}
  alias Nonceforge.MachineId.Strategy.{EnvironmentVariable, HostIdentifiers}

  @moduletag timeout: 120_000

  # A strategy whose answers are scripted: each call takes the next one (the
  # last one repeats), and reports what it did to `:notify`.
  defmodule Scripted do
    @behaviour Nonceforge.MachineId.Strategy

    def agent(acquire, renew), do: Agent.start_link(fn -> %{acquire: acquire, renew: renew} end)

    @impl true
    def acquire(_duration, opts), do: next(opts, :acquire)

    @impl true
    def renew(_lease, _duration, opts), do: next(opts, :renew)

    @impl true
    def release(lease, opts) do
      if pid = opts[:notify], do: send(pid, {:release, lease})
      :ok
    end

    @impl true
    def deterministic?, do: Process.get(:scripted_deterministic, false)

    defp next(opts, key) do
      result =
        Agent.get_and_update(opts[:agent], fn s ->
          case Map.fetch!(s, key) do
            [last] -> {last, s}
            [head | rest] -> {head, Map.put(s, key, rest)}
          end
        end)

      if pid = opts[:notify], do: send(pid, {key, result})
      result
    end
  end

  defmodule Deterministic do
    @behaviour Nonceforge.MachineId.Strategy
    @impl true
    defdelegate acquire(d, o), to: Scripted
    @impl true
    defdelegate renew(l, d, o), to: Scripted
    @impl true
    defdelegate release(l, o), to: Scripted
    @impl true
    def deterministic?, do: true
  end

  defp unique(prefix), do: :"#{prefix}_#{System.unique_integer([:positive, :monotonic])}"

  defp manager!(opts) do
    test = self()
    name = Keyword.get(opts, :name, unique(:lm))

    opts =
      opts
      |> Keyword.put_new(:name, name)
      |> Keyword.put_new(:lease_duration, 100_000)
      |> Keyword.put_new(:renew_interval, 100_000)
      |> Keyword.put_new(:on_lease_lost, fn reason -> send(test, {:lease_lost, reason}) end)

    start_supervised!({LeaseManager, opts})
    name
  end

  # What the manager's renewal timer sends, now.
  defp renew_now(name), do: send(name, {:renew, :sys.get_state(name).generation})

  @key :binary.copy(<<9>>, 32)

  describe "init/1" do
    test "takes the defaults, or a name and an epoch" do
      assert :ok = Nonceforge.init(machine_id: 1, name: unique(:plain))
      assert :ok = Nonceforge.init(machine_id: 1, name: :custom_compat, epoch: 1_609_459_200_000)
    end

    test "warns when the 42-bit timestamp runs out within a year, and refuses once it has" do
      long_ago = System.os_time(:millisecond) - 2 ** 42 + 24 * 60 * 60 * 1000 + 60_000

      {:ok, log} =
        with_log(fn -> Nonceforge.init(machine_id: 0, name: unique(:old), epoch: long_ago) end)

      assert log =~ "[warning] timestamp overflow in 1 days"

      assert_raise RuntimeError, "timestamp overflow", fn ->
        Nonceforge.init(machine_id: 0, epoch: System.os_time(:millisecond) - 2 ** 42 - 1000)
      end
    end

    test "refuses a machine ID out of range and a short base key" do
      assert_raise ArgumentError, "machine ID out of range 0-511", fn ->
        Nonceforge.init(machine_id: 512)
      end

      assert_raise ArgumentError, "machine ID out of range 0-511", fn ->
        Nonceforge.init(machine_id: -1)
      end

      assert_raise ArgumentError, "base_key size must be at least 256 bits", fn ->
        Nonceforge.init(machine_id: 1, base_key: "a")
      end
    end

    test "refuses a cipher not made for the size, and a key of the wrong length" do
      assert_raise ArgumentError, "alg aes is not supported for 64-bit nonces", fn ->
        Nonceforge.init(machine_id: 1, base_key: @key, cipher64: :aes, cipher96: :des3)
      end

      assert_raise ArgumentError, "alg aes is not supported for 96-bit nonces", fn ->
        Nonceforge.init(machine_id: 1, base_key: @key, cipher64: :des3, cipher96: :aes)
      end

      for {size, alg, len, words} <- [
            {64, :des3, 24, "des3 key size must be 192 bits"},
            {64, :blowfish, 16, "blowfish key size must be 128 bits"},
            {64, :speck, 16, "speck64 key size must be 128 bits"},
            {96, :des3, 24, "des3 key size must be 192 bits"},
            {96, :blowfish, 16, "blowfish key size must be 128 bits"},
            {96, :speck, 18, "speck96 key size must be 144 bits"},
            {128, :aes, 32, "aes key size must be 256 bits"},
            {128, :speck, 32, "speck128 key size must be 256 bits"}
          ] do
        opts = [{:"cipher#{size}", alg}, name: :keys_compat, machine_id: 1, base_key: @key]
        assert :ok = Nonceforge.init([{:"key#{size}", :crypto.strong_rand_bytes(len)} | opts])

        assert_raise ArgumentError, words, fn ->
          Nonceforge.init([{:"key#{size}", :crypto.strong_rand_bytes(1)} | opts])
        end
      end
    end

    test "without a key, encrypted nonces raise NoNoncense's RuntimeError" do
      :ok = Nonceforge.init(machine_id: 0, name: :raise_test_compat)

      for size <- [64, 96, 128] do
        assert_raise RuntimeError, "no key set at NoNoncense initialization", fn ->
          Nonceforge.encrypted_nonce(:raise_test_compat, size)
        end
      end
    end
  end

  describe "nonces" do
    setup do
      name = unique(:nonces)
      :ok = Nonceforge.init(machine_id: 0, name: name, base_key: @key)
      %{name: name}
    end

    test "an instance never initialized raises UninitializedError in NoNoncense's words" do
      for f <- [:nonce, :sortable_nonce, :encrypted_nonce] do
        assert_raise UninitializedError, "instance not_initialized is not initialized", fn ->
          apply(Nonceforge, f, [:not_initialized, 64])
        end
      end
    end

    test "a bit size or base type NoNoncense has no clause for is a FunctionClauseError", %{
      name: n
    } do
      for bits <- [0, 32, 65, 256, "64", nil] do
        assert_raise FunctionClauseError, fn -> Nonceforge.nonce(n, bits) end
        assert_raise FunctionClauseError, fn -> Nonceforge.sortable_nonce(n, bits) end
        assert_raise FunctionClauseError, fn -> Nonceforge.encrypted_nonce(n, bits) end
      end

      assert_raise FunctionClauseError, fn -> Nonceforge.encrypted_nonce(n, 64, :random) end

      for size <- [0, 1, 7, 9, 11, 13, 15, 17, 32] do
        assert_raise FunctionClauseError, fn -> Nonceforge.encrypt(n, <<0::size(size * 8)>>) end
        assert_raise FunctionClauseError, fn -> Nonceforge.decrypt(n, <<0::size(size * 8)>>) end
      end
    end

    test "every kind and size is unique under concurrent callers", %{name: n} do
      for f <- [:nonce, :sortable_nonce, :encrypted_nonce], bits <- [64, 96, 128] do
        all =
          1..4
          |> Task.async_stream(fn _ -> for _ <- 1..5_000, do: apply(Nonceforge, f, [n, bits]) end)
          |> Enum.flat_map(fn {:ok, list} -> list end)

        assert length(Enum.uniq(all)) == 20_000, "#{f}(#{bits})"
        assert Enum.all?(all, &(bit_size(&1) == bits))
      end
    end

    test "sortable nonces sort by the time they were made", %{name: n} do
      list = for _ <- 1..2_000, do: Nonceforge.sortable_nonce(n, 64)
      assert list == Enum.sort(list)
    end

    test "get_datetime/2 gives a sortable nonce's time", %{name: n} do
      before = System.os_time(:millisecond)
      dt = Nonceforge.get_datetime(n, Nonceforge.sortable_nonce(n, 128))
      ms = DateTime.to_unix(dt, :millisecond)
      assert ms >= before - 1 and ms <= System.os_time(:millisecond) + 1
    end
  end

  describe "encrypted nonces are NoNoncense's bytes" do
    # NoNoncense derives each key with PBKDF2-HMAC-SHA256 (1000 rounds) of the
    # base key, salted with the cipher's name, and encrypts the plain nonce in
    # ECB (3DES: CBC with a zero IV); a 96-bit nonce under a 64-bit cipher is
    # the 64-bit nonce encrypted, then 32 zero bits.
    defp key(salt, len), do: :crypto.pbkdf2_hmac(:sha256, @key, salt, 1000, len)

    test "Blowfish for 64 and 96 bits, AES-256 for 128, by default" do
      n = unique(:bf)
      :ok = Nonceforge.init(machine_id: 3, name: n, base_key: @key)

      for {bits, salt} <- [{64, "blowfish_64"}, {96, "blowfish_96"}] do
        plain = Nonceforge.nonce(n, 64)
        want = :crypto.crypto_one_time(:blowfish_ecb, key(salt, 16), plain, true)

        if bits == 64,
          do: assert(Nonceforge.encrypt(n, plain) == want),
          else: assert(Nonceforge.encrypt(n, plain <> <<0::32>>) == want <> <<0::32>>)
      end

      plain = Nonceforge.nonce(n, 128)

      assert Nonceforge.encrypt(n, plain) ==
               :crypto.crypto_one_time(:aes_256_ecb, key("aes", 32), plain, true)

      # encrypted_nonce(96) is an encrypted 64-bit nonce and 32 zero bits.
      assert <<_::64, 0::32>> = e = Nonceforge.encrypted_nonce(n, 96)
      assert <<_::64, 0::32>> = Nonceforge.decrypt(n, e)
    end

    test "3DES for 64 and 96 bits" do
      n = unique(:des)

      :ok =
        Nonceforge.init(machine_id: 3, name: n, base_key: @key, cipher64: :des3, cipher96: :des3)

      plain = Nonceforge.nonce(n, 64)

      assert Nonceforge.encrypt(n, plain) ==
               :crypto.crypto_one_time(:des_ede3_cbc, key("des3_64", 24), <<0::64>>, plain, true)

      assert Nonceforge.encrypt(n, plain <> <<0::32>>) ==
               :crypto.crypto_one_time(:des_ede3_cbc, key("des3_96", 24), <<0::64>>, plain, true) <>
                 <<0::32>>

      # A 96-bit nonce whose tail is not zero has no clause under 3DES.
      assert_raise FunctionClauseError, fn -> Nonceforge.encrypt(n, <<1::96>>) end
      assert_raise FunctionClauseError, fn -> Nonceforge.decrypt(n, <<1::96>>) end
    end

    test "encrypt/2 and decrypt/2: a permutation of each size, the same every time" do
      for opts <- [[], [cipher64: :speck, cipher96: :speck, cipher128: :speck]] do
        n = unique(:perm)
        :ok = Nonceforge.init([machine_id: 3, name: n, base_key: @key] ++ opts)

        # Under Blowfish (and 3DES) a 96-bit nonce is 64 bits and 32 zero bits.
        plain = fn
          96 when opts == [] -> Nonceforge.nonce(n, 64) <> <<0::32>>
          bits -> Nonceforge.nonce(n, bits)
        end

        for bits <- [64, 96, 128] do
          a = plain.(bits)
          b = plain.(bits)
          assert Nonceforge.encrypt(n, a) == Nonceforge.encrypt(n, a)
          assert Nonceforge.encrypt(n, a) != Nonceforge.encrypt(n, b)
          assert Nonceforge.decrypt(n, Nonceforge.encrypt(n, a)) == a
          assert Nonceforge.decrypt(n, Nonceforge.encrypted_nonce(n, bits)) |> bit_size() == bits
        end
      end
    end
  end

  describe "MachineId" do
    defp tree!(opts) do
      test = self()
      name = Keyword.get(opts, :name, unique(:sup))

      opts =
        opts
        |> Keyword.put_new(:name, name)
        |> Keyword.put_new(:lease_duration, 100_000)
        |> Keyword.put_new(:renew_interval, 100_000)
        |> Keyword.put_new(:on_lease_lost, fn reason -> send(test, {:lease_lost, reason}) end)

      start_supervised!({Nonceforge.MachineId, opts})
      %{name: name, manager: Module.concat(name, :LeaseManager)}
    end

    test "start-up waits for a lease, then every instance has its id" do
      {:ok, agent} =
        Scripted.agent([{:error, :down}, {:ok, 7, :lease, 100_000}], [{:ok, :lease, 100_000}])

      [a, b] = [unique(:db), unique(:iv)]

      {tree, _log} =
        with_log(fn ->
          tree!(
            strategy: Scripted,
            strategy_opts: [agent: agent],
            enable_conflict_guard?: false,
            instances: [[name: a], [name: b]]
          )
        end)

      assert LeaseManager.machine_id(tree.manager) == 7
      assert %{machine_id: 7} = Nonceforge.decompose(a, Nonceforge.nonce(a, 64))
      assert %{machine_id: 7} = Nonceforge.decompose(b, Nonceforge.nonce(b, 96))
    end

    test "start-up fails when no lease comes before :acquire_timeout" do
      {:ok, agent} = Scripted.agent([{:error, :down}], [{:ok, :lease, 100_000}])
      Process.flag(:trap_exit, true)

      {result, _log} =
        with_log(fn ->
          Nonceforge.MachineId.start_link(
            name: unique(:sup),
            strategy: Scripted,
            strategy_opts: [agent: agent],
            acquire_timeout: 30,
            enable_conflict_guard?: false,
            instances: [[name: unique(:nonce)]]
          )
        end)

      assert {:error, _} = result
    end

    test "starts a ConflictGuard under <name>.ConflictGuard by default" do
      {:ok, agent} = Scripted.agent([{:ok, 2, :lease, 100_000}], [{:ok, :lease, 100_000}])

      tree =
        tree!(strategy: Scripted, strategy_opts: [agent: agent], instances: [[name: unique(:n)]])

      assert Process.whereis(Module.concat(tree.name, :ConflictGuard))
      assert Process.whereis(tree.name), "the tree is registered under its name"
    end

    test "a lost lease: logged, instances disabled, the callback called, a new id restores them" do
      {:ok, agent} =
        Scripted.agent([{:ok, 3, :lease1, 100_000}, {:ok, 4, :lease2, 100_000}], [
          {:error, :lost, :stolen}
        ])

      instance = unique(:nonce)
      test = self()

      tree =
        tree!(
          strategy: Scripted,
          strategy_opts: [agent: agent],
          enable_conflict_guard?: false,
          on_lease_lost: fn reason ->
            send(test, {:lease_lost, reason})
            receive do: (:resume_reacquisition -> :ok)
          end,
          instances: [[name: instance]]
        )

      assert <<_::64>> = Nonceforge.nonce(instance, 64)

      log =
        capture_log(fn ->
          renew_now(tree.manager)
          assert_receive {:lease_lost, :stolen}
        end)

      assert log =~ "Lease of ID 3 lost: :stolen"
      assert_raise DisabledError, fn -> Nonceforge.nonce(instance, 64) end
      send(tree.manager, :resume_reacquisition)
      assert eventually(fn -> LeaseManager.machine_id(tree.manager) == 4 end)
      assert %{machine_id: 4} = Nonceforge.decompose(instance, Nonceforge.nonce(instance, 64))
    end
  end

  describe "LeaseManager" do
    test "a ttl below 30 s is a loss (:illegal_ttl) and start-up fails" do
      {:ok, agent} = Scripted.agent([{:ok, 3, :lease1, 29_999}], [])
      test = self()
      Process.flag(:trap_exit, true)

      {result, _log} =
        with_log(fn ->
          LeaseManager.start_link(
            name: unique(:lm),
            strategy: Scripted,
            strategy_opts: [agent: agent],
            on_lease_lost: fn reason -> send(test, {:lease_lost, reason}) end
          )
        end)

      assert {:error, :lease_acquisition_failed} = result
      assert_receive {:lease_lost, :illegal_ttl}
    end

    test "renews a cached lease instead of acquiring another" do
      cache = unique(:cache)
      start_supervised!({LeaseCache, name: cache})
      LeaseCache.put(cache, %{machine_id: 12, lease: :cached, leased?: true})
      {:ok, agent} = Scripted.agent([{:error, :should_not_acquire}], [{:ok, :cached, 100_000}])
      name = manager!(strategy: Scripted, strategy_opts: [agent: agent], lease_cache: cache)
      assert LeaseManager.machine_id(name) == 12
    end

    test "a cached lease that cannot be renewed: its instances are disabled, the cache cleared" do
      cache = unique(:cache)
      instance = unique(:nonce)
      test = self()
      start_supervised!({LeaseCache, name: cache})
      LeaseCache.put(cache, %{machine_id: 12, lease: :cached, leased?: true})
      :ok = Nonceforge.init(machine_id: 12, name: instance)
      {:ok, agent} = Scripted.agent([{:error, :down}], [{:error, :retry, :unavailable}])
      Process.flag(:trap_exit, true)

      {result, _log} =
        with_log(fn ->
          LeaseManager.start_link(
            name: unique(:lm),
            strategy: Scripted,
            strategy_opts: [agent: agent],
            lease_cache: cache,
            instances: [[name: instance]],
            acquire_timeout: 0,
            on_lease_lost: fn reason -> send(test, {:lease_lost, reason}) end
          )
        end)

      assert {:error, :lease_acquisition_failed} = result
      assert_receive {:lease_lost, :timeout}
      assert LeaseCache.get(cache) == %{machine_id: nil, lease: nil, leased?: false}
      assert_raise DisabledError, fn -> Nonceforge.nonce(instance, 64) end
    end

    test "renews on its generation-tagged timer message" do
      {:ok, agent} = Scripted.agent([{:ok, 3, :lease1, 100_000}], [{:ok, :lease2, 100_000}])
      name = manager!(strategy: Scripted, strategy_opts: [agent: agent, notify: self()])
      renew_now(name)
      assert_receive {:renew, {:ok, :lease2, 100_000}}
      assert LeaseManager.machine_id(name) == 3
    end

    test "an ambiguous renewal failure keeps the instances: logged, retried" do
      instance = unique(:nonce)
      {:ok, agent} = Scripted.agent([{:ok, 3, :lease1, 100_000}], [{:error, :retry, :hiccup}])

      name =
        manager!(
          strategy: Scripted,
          strategy_opts: [agent: agent, notify: self()],
          instances: [[name: instance]]
        )

      log =
        capture_log(fn ->
          renew_now(name)
          assert_receive {:renew, {:error, :retry, :hiccup}}
          :sys.get_state(name)
        end)

      assert log =~ "Lease renewal failed"
      assert LeaseManager.machine_id(name) == 3
      assert <<_::64>> = Nonceforge.nonce(instance, 64)
      refute_received {:lease_lost, _}
    end

    test "a confirmed loss under a deterministic strategy is not followed by a new acquisition" do
      instance = unique(:nonce)
      {:ok, agent} = Scripted.agent([{:ok, 3, :lease1, 100_000}], [{:error, :lost, :gone}])

      name =
        manager!(
          strategy: Deterministic,
          strategy_opts: [agent: agent, notify: self()],
          instances: [[name: instance]]
        )

      assert_receive {:acquire, {:ok, 3, :lease1, 100_000}}
      capture_log(fn -> renew_now(name) end)
      assert_receive {:lease_lost, :gone}
      :sys.get_state(name)
      refute_received {:acquire, _}
      assert LeaseManager.machine_id(name) == nil
      assert_raise DisabledError, fn -> Nonceforge.nonce(instance, 64) end
    end

    test "a loss told from outside goes the same way" do
      instance = unique(:nonce)

      {:ok, agent} =
        Scripted.agent([{:ok, 3, :lease1, 100_000}, {:ok, 5, :lease2, 100_000}], [
          {:ok, :lease1, 100_000}
        ])

      name =
        manager!(
          strategy: Scripted,
          strategy_opts: [agent: agent],
          instances: [[name: instance]]
        )

      log = capture_log(fn -> LeaseManager.lease_lost(name) end)
      assert log =~ "Lease of ID 3 lost: :external"
      assert_receive {:lease_lost, :external}
      assert eventually(fn -> LeaseManager.machine_id(name) == 5 end)
    end

    test "NoNoncense's schedule: renew 10 s before the sooner of ttl - 10 s and the interval" do
      for {ttl, interval, renew_at, expire_at} <- [
            {40_000, 100_000, 20_000, 30_000},
            {100_000, 20_000, 10_000, 90_000}
          ] do
        {:ok, agent} = Scripted.agent([{:ok, 3, :lease1, ttl}], [])

        name =
          manager!(strategy: Scripted, strategy_opts: [agent: agent], renew_interval: interval)

        %{timers: timers} = :sys.get_state(name)
        assert_in_delta Process.read_timer(timers[:renew]), renew_at, 1_000
        assert_in_delta Process.read_timer(timers[:expired]), expire_at, 1_000
        stop_supervised!(LeaseManager)
      end
    end

    test "shutting down disables the instances, then releases the lease" do
      instance = unique(:nonce)
      {:ok, agent} = Scripted.agent([{:ok, 3, :lease1, 100_000}], [{:ok, :lease1, 100_000}])

      manager!(
        strategy: Scripted,
        strategy_opts: [agent: agent, notify: self()],
        instances: [[name: instance]]
      )

      assert <<_::64>> = Nonceforge.nonce(instance, 64)
      capture_log(fn -> stop_supervised!(LeaseManager) end)
      assert_receive {:release, :lease1}
      assert_raise DisabledError, fn -> Nonceforge.nonce(instance, 64) end
    end
  end

  describe "strategies" do
    @var "NONCEFORGE_COMPAT_TEST_MACHINE_ID"

    test "EnvironmentVariable: the number at the end of the value, or NoNoncense's errors" do
      System.put_env(@var, "nonce-worker-123")

      assert {:ok, 123, :static, 60_000} =
               EnvironmentVariable.acquire(60_000, variable_name: @var)

      System.delete_env(@var)

      assert {:error, "env var #{@var} not found"} ==
               EnvironmentVariable.acquire(60_000, variable_name: @var)

      System.put_env(@var, "nonce-worker")

      assert {:error, "could not parse #{@var}=nonce-worker"} ==
               EnvironmentVariable.acquire(60_000, variable_name: @var)

      assert {:ok, :lease, 60_000} = EnvironmentVariable.renew(:lease, 60_000, [])
      assert :ok = EnvironmentVariable.release(:lease, [])
    after
      System.delete_env(@var)
    end

    test "HostIdentifiers: this node's place in the list read as a set" do
      assert HostIdentifiers.id!(node_list: ["192.0.2.1", :a, "127.0.0.1"]) == 1

      assert_raise RuntimeError, "machine ID could not be determined", fn ->
        HostIdentifiers.id!(node_list: ["192.0.2.1"])
      end
    end
  end

  describe "NoNoncense 1.x's setup, renamed" do
    test "MachineId.id!/1 with its keyword options, and id!/0" do
      assert Nonceforge.MachineId.id!(machine_id: 10, node_list: [:a]) == 10
      assert Nonceforge.MachineId.id!(node_list: [:a, :b, "127.0.0.1"]) == 2

      assert_raise RuntimeError, "Node ID 2 out of range 0-1", fn ->
        Nonceforge.MachineId.id!(max_nodes: 2, node_list: [:a, :b, "127.0.0.1"])
      end

      assert_raise RuntimeError, "machine ID could not be determined", fn ->
        Nonceforge.MachineId.id!()
      end

      # Not a keyword list, nor a spec: refused, naming both forms.
      assert_raise ArgumentError, ~r/keyword list .* or a spec/, fn ->
        Nonceforge.MachineId.id!([1, 2])
      end
    end

    test "the README's lines: id!, init, and the guard as a child" do
      machine_id = Nonceforge.MachineId.id!(node_list: [:"myapp@127.0.0.1", "127.0.0.1"])
      assert machine_id in 0..1

      :ok =
        Nonceforge.init(
          machine_id: machine_id,
          base_key: :crypto.strong_rand_bytes(32),
          name: :readme_1x
        )

      assert <<_::96>> = Nonceforge.encrypted_nonce(:readme_1x, 96)

      children = [
        {Nonceforge.MachineId.ConflictGuard, [machine_id: machine_id, on_conflict: fn -> :ok end]}
      ]

      {:ok, sup} = Supervisor.start_link(children, strategy: :one_for_one)
      assert Nonceforge.MachineId.ConflictGuard.state().machine_id.() == machine_id
      Supervisor.stop(sup)
    end

    test "name: nil and epoch: nil are the defaults" do
      :ok = Nonceforge.init(name: nil, epoch: nil, machine_id: 6)
      assert <<_::64>> = Nonceforge.nonce(64)
      assert Nonceforge.get_datetime(<<0::64>>) == ~U[2025-01-01 00:00:00.000Z]
    end
  end

  test "the masks NoNoncense's layout tests read: a 64-bit counter nonce is 42 + 9 + 13 bits" do
    n = unique(:layout)
    :ok = Nonceforge.init(machine_id: 257, name: n)
    <<_ts::42, id::9, _count::13>> = Nonceforge.nonce(n, 64)
    assert id == 257
    <<_::42, id96::9, _::45>> = Nonceforge.nonce(n, 96)
    assert id96 == 257 and (1 <<< 9) - 1 >= id96
  end
end
