defmodule Nonceforge.MachineId.Strategy.StatefulSet do
  @moduledoc """
  A Kubernetes StatefulSet pod's machine id: its pod index, fenced by a lease
  on exactly that id in the fleet's store, so that two pods with one index —
  the pod a rolling update is replacing and its successor, or one cut off by a
  partition — never both issue. The newcomer logs a warning, once, and waits
  while the other holds the id; its nonces start above the other's last.

      {Nonceforge.MachineId,
       strategy: Nonceforge.MachineId.Strategy.StatefulSet,
       strategy_opts: [url: "redis://redis:6379"],
       instances: [[base_key: System.fetch_env!("BASE_KEY")]]}

  Options: `:url` (required: any store of `Nonceforge.MachineId.Strategy.Lease`),
  `:id_from` (default `"env:POD_INDEX"`: the downward API's
  `apps.kubernetes.io/pod-index` label as an environment variable, or a pod
  name ending in the index; `"file:/etc/podinfo/labels"` reads a downward API
  labels file, `"hostname"` the pod's host name), `:id_wait` (ms to wait for
  the id, default as long as it takes) and the lease options of `Lease`
  (`:ttl`, `:namespace`, …; not `:ids`: the id is the index).
  docs/operations.md has the manifest.

  It is `Lease` with `:id_from` set, so every rule of the lease holds: the
  core stops the instances at the lease's deadline, and a lost lease is taken
  again (waiting for the same index) by `Nonceforge.MachineId`. There is no
  default id: without the variable or file, acquiring fails and says which.
  """
  use Nonceforge.MachineId.Strategy, lease: true
  alias Nonceforge.MachineId.Strategy.Lease

  @doc "Where the pod index is read from when `:id_from` is not given."
  def default_id_from, do: "env:POD_INDEX"

  @impl true
  def acquire(lease_duration, opts),
    do: Lease.acquire(lease_duration, Keyword.put_new(opts, :id_from, default_id_from()))
end
