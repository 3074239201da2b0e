defmodule Nonceforge.MachineId.Strategy do
  @moduledoc """
  How `Nonceforge.MachineId` gets this node's machine id: NoNoncense 2.0's
  strategy behaviour, under our name. Implement it to take ids from your own
  coordinator; the built-in strategies are `EnvironmentVariable`,
  `HostIdentifiers`, `RedisLease`, `SqlLease`, `Lease` (any store of the
  lease crate, etcd included) and `StatefulSet` (a pod index fenced by a
  lease).

  * `acquire(lease_duration, opts)` — `{:ok, machine_id, lease, ttl_ms}` or
    `{:error, reason}`. `lease` is anything the strategy needs later.
  * `renew(lease, lease_duration, opts)` — `{:ok, lease, ttl_ms}`, or
    `{:error, :lost, reason}` when the lease is certainly gone, or
    `{:error, :retry, reason}` when it cannot tell (the manager retries while
    the lease is still known to be valid).
  * `release(lease, opts)` — best effort, idempotent: `:ok`.
  * `deterministic?()` — true when acquiring again would give the same id
    (then a conflict is not retried).

  `use Nonceforge.MachineId.Strategy` gives a `renew/3` that always
  succeeds, a `release/2` that does nothing and `deterministic?/0` true;
  `use Nonceforge.MachineId.Strategy, lease: true`, for a strategy whose
  `acquire/2` takes its id through `Lease.acquire/2`, gives `Lease`'s
  `renew/3` and `release/2` and `deterministic?/0` false.

  A strategy's `ttl_ms` is the promise the manager keeps: past it, without a
  renewal, every instance is disabled. Leases of the lease crate (`RedisLease`,
  `SqlLease`, `Lease`) are stricter still: the core checks the deadline on
  every nonce, not only when a timer fires.
  """

  @callback acquire(lease_duration :: pos_integer(), opts :: keyword()) ::
              {:ok, machine_id :: 0..511, lease :: term(), ttl_ms :: pos_integer()}
              | {:error, reason :: term()}

  @callback renew(lease :: term(), lease_duration :: pos_integer(), opts :: keyword()) ::
              {:ok, lease :: term(), ttl_ms :: pos_integer()}
              | {:error, :lost, reason :: term()}
              | {:error, :retry, reason :: term()}

  @callback release(lease :: term(), opts :: keyword()) :: :ok

  @callback deterministic?() :: boolean()

  @doc false
  defmacro __using__(opts) do
    if Keyword.get(opts, :lease, false), do: lease_strategy(), else: fixed_strategy()
  end

  # A strategy whose ids come through `Lease` (its acquire/2 calls
  # Lease.acquire/2): Lease's renewal and release; acquiring again may give
  # another id.
  defp lease_strategy do
    quote location: :keep do
      @behaviour Nonceforge.MachineId.Strategy

      @impl true
      defdelegate renew(lease, lease_duration, opts), to: Nonceforge.MachineId.Strategy.Lease

      @impl true
      defdelegate release(lease, opts), to: Nonceforge.MachineId.Strategy.Lease

      @impl true
      def deterministic?, do: false
    end
  end

  defp fixed_strategy do
    quote location: :keep do
      @behaviour Nonceforge.MachineId.Strategy

      @impl true
      def renew(lease, lease_duration, _opts), do: {:ok, lease, lease_duration}

      @impl true
      def release(_lease, _opts), do: :ok

      @impl true
      def deterministic?, do: true

      defoverridable renew: 3, release: 2, deterministic?: 0
    end
  end
end
