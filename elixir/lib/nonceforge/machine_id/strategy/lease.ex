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

  **Kubernetes StatefulSets.** `:id_from` takes the machine id from the pod's
  index — `"env:POD_INDEX"` (the downward API's `apps.kubernetes.io/pod-index`
  label, or a pod name ending in it), `"file:/etc/podinfo/labels"` (a downward
  API labels file) or `"hostname"` — and leases exactly that id, so two pods
  with one index (the pod being replaced in a rolling update, one cut off by a
  partition) never both issue: the newcomer logs a warning, once, and waits
  while the other holds it, up to `:id_wait` ms (default: as long as it
  takes); not with `:ids`. docs/operations.md has the manifest;
  `Nonceforge.MachineId.Strategy.StatefulSet` is this strategy with
  `:id_from` defaulting to `"env:POD_INDEX"`.

      {Nonceforge.MachineId,
       strategy: Nonceforge.MachineId.Strategy.Lease,
       strategy_opts: [url: "redis://redis:6379", id_from: "env:POD_INDEX"],
       instances: [[base_key: System.fetch_env!("BASE_KEY")]]}

  The lease crate renews on its own thread and checks the deadline on every
  nonce: the instances on this lease stop the moment it may have lapsed, even
  if the BEAM is too busy to run the manager's timers. So `:lease_duration` and
  `:renew_interval` of `Nonceforge.MachineId` do not apply; `:ttl` does. A lease
  that lapses comes back by itself if the store still has the id for this node
  (`{:error, :retry, :lapsed}` meanwhile); one that is lost is reacquired by the
  manager, above the previous holder's last timestamp.
  """
  use Nonceforge.MachineId.Strategy
  require Logger

  @impl true
  def acquire(_lease_duration, opts), do: acquire_url(Keyword.get(opts, :url), opts)

  @doc false
  def acquire_url(url, opts) do
    lease_opts = Keyword.drop(opts, [:url, :repo, :id_from, :id_wait])

    case Keyword.fetch(opts, :id_from) do
      {:ok, source} -> acquire_pod_index(url, source, Keyword.get(opts, :id_wait), lease_opts)
      :error -> acquire_lowest(url, opts, lease_opts)
    end
  end

  defp acquire_lowest(url, opts, lease_opts) do
    if Keyword.has_key?(opts, :id_wait) do
      {:error,
       "strategy_opts :id_wait needs :id_from (it is how long to wait for the pod index's id)"}
    else
      acquire_any(url, lease_opts)
    end
  end

  # The pod's index, exactly: a first try without waiting, so that a wait is
  # logged (once) before it starts.
  defp acquire_pod_index(url, source, wait, lease_opts) do
    cond do
      not is_binary(source) ->
        {:error,
         "strategy_opts :id_from must be \"env:VAR\", \"file:PATH\" or \"hostname\", got: #{inspect(source)}"}

      Keyword.has_key?(lease_opts, :ids) ->
        {:error, "strategy_opts :id_from cannot be given with :ids (the id is the pod index)"}

      not (is_nil(wait) or (is_integer(wait) and wait >= 0)) ->
        {:error,
         "strategy_opts :id_wait must be milliseconds (a non-negative integer), got: #{inspect(wait)}"}

      true ->
        try do
          url = Nonceforge.LeaseOptions.check_url(url)
          lease_opts = Nonceforge.LeaseOptions.from_keyword(lease_opts)

          value = env_value(source)

          case Nonceforge.nif_lease_acquire_exact(url, lease_opts, source, value, 0) do
            {:error, :taken, id} when wait != 0 ->
              Logger.warning(
                "Nonceforge.MachineId: machine id #{id} (from #{source}) is held by another member — the pod this one replaces, or another with the same index: waiting for it to be released or to lapse; nothing is issued meanwhile"
              )

              granted(Nonceforge.nif_lease_acquire_exact(url, lease_opts, source, value, wait))

            other ->
              granted(other)
          end
        rescue
          e in ArgumentError -> {:error, Exception.message(e)}
        end
    end
  end

  # env:VAR is read as the VM sees it (System.get_env/1), not the OS
  # environment the NIF would read: the emulator keeps its own copy.
  defp env_value("env:" <> var) when var != "", do: System.get_env(var)
  defp env_value(_), do: nil

  defp granted({:ok, lease, id, _floor}),
    do: {:ok, id, {:nonceforge_lease, lease}, Nonceforge.nif_lease_ttl_ms(lease)}

  defp granted({:error, :taken, id}),
    do: {:error, "machine id #{id} is still held by another member after strategy_opts :id_wait"}

  defp acquire_any(url, lease_opts) do
    try do
      {:ok, lease, id, _floor} =
        Nonceforge.nif_lease_acquire(
          Nonceforge.LeaseOptions.check_url(url),
          Nonceforge.LeaseOptions.from_keyword(lease_opts)
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
