defmodule Nonceforge.LeaseTest do
  # Leases against real PostgreSQL, Redis and etcd on loopback ports, through
  # the Rust lease crate inside the NIF: the same stores and records as the
  # CLI's --lease. Not async: each test owns its servers.
  use ExUnit.Case, async: false
  alias Nonceforge.Errors.DisabledError
  alias Nonceforge.Test.{Beam, Stores}

  @moduletag timeout: 120_000

  # Another BEAM that leases an id from `url`, prints it, and holds it until killed.
  defp other_node(url) do
    script = """
    :ok = Nonceforge.init(machine_id: {:lease, #{inspect(url)}, ttl: 2000})
    IO.puts("id=\#{Nonceforge.machine_id()}")
    Process.sleep(:infinity)
    """

    {port, id} = Beam.start(script, [], "id=")
    {port, String.to_integer(id)}
  end

  defp kill(port), do: Beam.kill(port)

  for kind <- [:postgres, :redis, :etcd] do
    test "#{kind}: two BEAM nodes get different ids; release frees ours" do
      store = apply(Stores, unquote(kind), [])

      try do
        {other, other_id} = other_node(store.url)
        name = :"leased_#{unquote(kind)}"
        :ok = Nonceforge.init(name: name, machine_id: {:lease, store.url, ttl: 2000})
        mine = Nonceforge.machine_id(name)
        assert mine != other_id
        assert {:held, left} = Nonceforge.lease_state(name)
        assert left > 0 and left <= 2000

        assert %{machine_id: ^mine} =
                 Nonceforge.decompose(name, Nonceforge.sortable_nonce(name, 96))

        # renewals keep it alive past the TTL
        Process.sleep(2500)
        assert byte_size(Nonceforge.nonce(name, 128)) == 16
        assert :ok = Nonceforge.release(name)
        assert_raise DisabledError, fn -> Nonceforge.nonce(name, 64) end
        kill(other)
        # the next holder of our id starts above our floor
        :ok =
          Nonceforge.init(
            name: :"#{name}_again",
            machine_id: {:lease, store.url, ttl: 2000, ids: mine..mine}
          )

        assert Nonceforge.machine_id(:"#{name}_again") == mine
        :ok = Nonceforge.release(:"#{name}_again")
      after
        Stores.stop(store)
      end
    end
  end

  test "redis: a wide namespace records its layout; a standard member is refused" do
    store = Stores.redis()

    try do
      wide = [
        machine_id: {:lease, store.url, ttl: 2000, namespace: "exwide"},
        mode: :nonceforge,
        layout: :wide
      ]

      :ok = Nonceforge.init([name: :wide_a] ++ wide)
      :ok = Nonceforge.init([name: :wide_b] ++ wide)
      assert Nonceforge.machine_id(:wide_a) != Nonceforge.machine_id(:wide_b)

      for name <- [:wide_a, :wide_b] do
        id = Nonceforge.machine_id(name)
        assert %{machine_id: ^id} = Nonceforge.decompose(name, Nonceforge.nonce(name, 96))
      end

      assert_raise ArgumentError,
                   ~r/holds members of the wide layout; this member asks for the standard layout/,
                   fn ->
                     Nonceforge.init(
                       name: :standard_in_wide,
                       machine_id: {:lease, store.url, ttl: 2000, namespace: "exwide"}
                     )
                   end

      :ok = Nonceforge.release(:wide_a)
      :ok = Nonceforge.release(:wide_b)
    after
      Stores.stop(store)
    end
  end

  test "redis: a store outage past the deadline disables; nothing is issued after it" do
    store = Stores.redis()

    try do
      :ok =
        Nonceforge.init(
          name: :outage,
          machine_id: {:lease, store.url, ttl: 1000, connect_timeout: 200}
        )

      assert byte_size(Nonceforge.nonce(:outage, 96)) == 12
      Stores.stop(store)
      assert_receive {:nonceforge, :lease_lost, :lapsed}, 5_000
      deadline = System.os_time(:millisecond)
      assert_raise DisabledError, fn -> Nonceforge.nonce(:outage, 96) end

      # For a while after the lapse, every kind and size is refused.
      for _ <- 1..200, bits <- [64, 96, 128] do
        assert_raise DisabledError, fn -> Nonceforge.sortable_nonce(:outage, bits) end
        assert_raise DisabledError, fn -> Nonceforge.nonce(:outage, bits) end
      end

      assert {:lapsed, 0} = Nonceforge.lease_state(:outage)
      assert System.os_time(:millisecond) >= deadline
    after
      File.rm_rf(store.dir)
    end
  end

  test "an unreachable store is an ArgumentError naming the lease, quickly" do
    port = Stores.free_port()

    assert_raise ArgumentError, ~r/lease/, fn ->
      Nonceforge.init(
        name: :unreachable,
        machine_id: {:lease, "redis://127.0.0.1:#{port}", connect_timeout: 300}
      )
    end
  end
end
