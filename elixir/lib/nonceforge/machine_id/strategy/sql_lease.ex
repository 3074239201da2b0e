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
  use Nonceforge.MachineId.Strategy, lease: true
  alias Nonceforge.MachineId.Strategy.Lease

  @impl true
  def acquire(lease_duration, opts) do
    case url(Keyword.get(opts, :repo)) do
      {:ok, url} -> Lease.acquire(lease_duration, Keyword.put(opts, :url, url))
      {:error, reason} -> {:error, reason}
    end
  end

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
