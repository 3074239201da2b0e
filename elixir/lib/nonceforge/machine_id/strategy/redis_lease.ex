defmodule Nonceforge.MachineId.Strategy.RedisLease do
  @moduledoc """
  A machine id leased from Redis (any version; Valkey too) through
  nonceforge's lease crate: `Nonceforge.MachineId.Strategy.Lease` with a
  `redis://` URL. NoNoncense's `RedisLease` takes a Redix connection
  (`:with_connection`); this one takes the URL, as every other face of
  nonceforge does, and needs no Redix:

      {Nonceforge.MachineId,
       strategy: Nonceforge.MachineId.Strategy.RedisLease,
       strategy_opts: [url: "redis://10.0.0.5:6379"],
       instances: [[base_key: System.fetch_env!("BASE_KEY")]]}

  Options as `Nonceforge.MachineId.Strategy.Lease`'s. Its records are
  nonceforge's (`<namespace>:lease:<id>` keys, `{<namespace>}:lease:<id>` in a
  Redis Cluster), not NoNoncense's hash: see the
  package README for switching a fleet without two nodes sharing an id.
  """
  use Nonceforge.MachineId.Strategy, lease: true
  alias Nonceforge.MachineId.Strategy.Lease

  @schemes ["redis://", "rediss://", "redis+sentinel://", "redis+cluster://"]

  @impl true
  def acquire(lease_duration, opts) do
    url = Keyword.get(opts, :url)

    if is_binary(url) and String.starts_with?(url, @schemes) do
      Lease.acquire(lease_duration, opts)
    else
      {:error,
       "strategy_opts :url must be a redis://, rediss://, redis+sentinel:// or redis+cluster:// URL, got: #{inspect(url)}"}
    end
  end
end
