defmodule Nonceforge.MachineId.Strategy.Lease do
  @moduledoc """
  A machine id leased through nonceforge's lease crate — the same stores,
  records and rules as the CLI's `--lease`, PostgreSQL's
  `nonceforge.machine_id = 'lease'`, Node and Go, so one fleet of mixed
  languages shares one id space:

      {Nonceforge.MachineId,
       strategy: Nonceforge.MachineId.Strategy.Lease,
       strategy_opts: [url: "etcd://10.0.0.5:2379"],
       instances: [[base_key: System.fetch_env!("BASE_KEY")]]}

  Options: `:url` (required: `postgres://…`, `redis://…`, `redis+sentinel://…`,
  `redis+cluster://…` or `etcd://…`), and
  the lease options of `Nonceforge.init/1`'s `{:lease, url, opts}`: `:ttl` (ms,
  default 10000), `:renew_every`, `:margin`, `:connect_timeout`, `:ids`,
  `:namespace`, `:holder`, `:pg_schema`.

  The lease crate renews on its own thread and checks the deadline on every
  nonce: the instances on this lease stop the moment it may have lapsed, even
  if the BEAM is too busy to run the manager's timers. So `:lease_duration` and
  `:renew_interval` of `Nonceforge.MachineId` do not apply; `:ttl` does. A lease
  that lapses comes back by itself if the store still has the id for this node
  (`{:error, :retry, :lapsed}` meanwhile); one that is lost is reacquired by the
  manager, above the previous holder's last timestamp.
  """
  use Nonceforge.MachineId.Strategy

  @impl true
  def acquire(_lease_duration, opts), do: acquire_url(Keyword.get(opts, :url), opts)

  @doc false
  def acquire_url(url, opts) do
    lease_opts = Keyword.drop(opts, [:url, :repo])

    try do
      {:ok, lease, id, _floor} =
        Nonceforge.nif_lease_acquire(
          Nonceforge.check_url(url),
          Nonceforge.lease_options(lease_opts)
        )

      {:ok, id, {:nonceforge_lease, lease}, Nonceforge.nif_lease_ttl_ms(lease)}
    rescue
      e in ArgumentError -> {:error, Exception.message(e)}
    end
  end

  @impl true
  def renew({:nonceforge_lease, lease} = held, _lease_duration, _opts) do
    case Nonceforge.nif_lease_status(lease) do
      {:held, _left} -> {:ok, held, Nonceforge.nif_lease_ttl_ms(lease)}
      {:lapsed, _} -> {:error, :retry, :lapsed}
      {state, _} -> {:error, :lost, Nonceforge.nif_lease_lost_reason(lease) || state}
    end
  end

  @impl true
  def release({:nonceforge_lease, lease}, _opts) do
    Nonceforge.nif_lease_release(lease)
    :ok
  end

  @impl true
  def deterministic?, do: false
end
