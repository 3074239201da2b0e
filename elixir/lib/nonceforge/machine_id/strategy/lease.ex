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

  Options: `:url` (required: `postgres://…`, `redis://…` or `etcd://…`), and
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
  nonceforge's (`<namespace>:lease:<id>` keys), not NoNoncense's hash: see the
  package README for switching a fleet without two nodes sharing an id.
  """
  use Nonceforge.MachineId.Strategy
  alias Nonceforge.MachineId.Strategy.Lease

  @impl true
  def acquire(lease_duration, opts) do
    case Keyword.get(opts, :url) do
      "redis://" <> _ -> Lease.acquire(lease_duration, opts)
      url -> {:error, "strategy_opts :url must be a redis:// URL, got: #{inspect(url)}"}
    end
  end

  @impl true
  defdelegate renew(lease, lease_duration, opts), to: Lease
  @impl true
  defdelegate release(lease, opts), to: Lease
  @impl true
  def deterministic?, do: false
end

defmodule Nonceforge.MachineId.Strategy.SqlLease do
  @moduledoc """
  A machine id leased from PostgreSQL through nonceforge's lease crate, in the
  database your Ecto repo uses — its connection settings are read from
  `repo.config()` (`:url`, or `:hostname`/`:socket_dir`, `:port`, `:username`,
  `:password`, `:database`); no Ecto call is made, and Ecto need not be loaded
  when a module with `config/0` is given:

      {Nonceforge.MachineId,
       strategy: Nonceforge.MachineId.Strategy.SqlLease,
       strategy_opts: [repo: MyApp.Repo],
       instances: [[base_key: System.fetch_env!("BASE_KEY")]]}

  The lease crate creates its schema and tables (`nonceforge_lease.<namespace>_leases`
  and `_meta`; lease protocol 2, docs/lease-protocol.md) on first use, owned
  by the repo's role: it needs `CREATE` on the database once (or a DBA runs
  `CREATE SCHEMA nonceforge_lease AUTHORIZATION <role>`); a schema or table of
  another role is refused. `:pg_schema` names another schema. Other options as
  `Nonceforge.MachineId.Strategy.Lease`'s. PostgreSQL only (NoNoncense's also
  speaks MySQL).
  """
  use Nonceforge.MachineId.Strategy
  alias Nonceforge.MachineId.Strategy.Lease

  @impl true
  def acquire(lease_duration, opts) do
    case url(Keyword.get(opts, :repo)) do
      {:ok, url} -> Lease.acquire(lease_duration, Keyword.put(opts, :url, url))
      {:error, reason} -> {:error, reason}
    end
  end

  @impl true
  defdelegate renew(lease, lease_duration, opts), to: Lease
  @impl true
  defdelegate release(lease, opts), to: Lease
  @impl true
  def deterministic?, do: false

  @doc false
  def url(repo) when is_atom(repo) and not is_nil(repo) do
    if Code.ensure_loaded?(repo) and function_exported?(repo, :config, 0),
      do: config_url(repo.config()),
      else:
        {:error,
         "strategy_opts :repo must be a module with config/0 (an Ecto repo), got: #{inspect(repo)}"}
  end

  def url(repo),
    do: {:error, "strategy_opts :repo is required (an Ecto repo module), got: #{inspect(repo)}"}

  defp config_url(config) do
    case Keyword.get(config, :url) do
      "postgres" <> _ = url ->
        {:ok, url}

      nil ->
        user = Keyword.get(config, :username, System.get_env("USER", "postgres"))
        pass = Keyword.get(config, :password)
        host = Keyword.get(config, :hostname, "localhost")
        port = Keyword.get(config, :port, 5432)
        db = Keyword.get(config, :database)

        if is_nil(db) do
          {:error, "the repo's config has no :database"}
        else
          auth =
            URI.encode_www_form(to_string(user)) <>
              if(pass, do: ":" <> URI.encode_www_form(to_string(pass)), else: "")

          {:ok, "postgres://#{auth}@#{host}:#{port}/#{URI.encode_www_form(to_string(db))}"}
        end

      other ->
        {:error, "the repo's :url is not a PostgreSQL URL: #{inspect(other)}"}
    end
  end
end
