defmodule Nonceforge.MachineId do
  @moduledoc """
  This node's machine id, held for the life of the node — NoNoncense 2.0's
  `NoNoncense.MachineId`, under our name. Put it in your supervision tree; it
  gets the id through a `Nonceforge.MachineId.Strategy`, initializes every
  instance in `:instances` with it before start-up goes on, keeps it (renewing
  leases), and when it is lost disables those instances
  (`Nonceforge.Errors.DisabledError`) until it has an id again:

      children = [
        {Nonceforge.MachineId,
         strategy: Nonceforge.MachineId.Strategy.RedisLease,
         strategy_opts: [url: "redis://10.0.0.5:6379"],
         on_lease_lost: fn reason -> Logger.critical("nonces stopped: \#{inspect(reason)}") end,
         instances: [[base_key: System.fetch_env!("BASE_KEY")], [name: :ivs, epoch: 1_609_459_200_000]]}
      ]

  | option | default | |
  |---|---|---|
  | `:strategy` | required | `EnvironmentVariable`, `HostIdentifiers`, `RedisLease`, `SqlLease`, `Lease`, `StatefulSet` (under `Nonceforge.MachineId.Strategy`), or your own |
  | `:strategy_opts` | `[]` | passed to the strategy |
  | `:instances` | `[[]]` | a keyword list of `Nonceforge.init/1` options per instance (no `:machine_id`); `:name` defaults to `Nonceforge` |
  | `:name` | `Nonceforge.MachineId` | this tree's name; the guard is `<name>.ConflictGuard`, the manager `<name>.LeaseManager` |
  | `:lease_duration` | 8 hours | asked of the strategy at each acquire and renew (ms) |
  | `:renew_interval` | 30 minutes | NoNoncense's schedule: the lease counts as ending 10 s before its ttl; it is renewed after this interval or that, whichever is sooner, less 10 s (ms) |
  | `:min_ttl` | 30 s | a shorter ttl from the strategy counts as a loss (`:illegal_ttl`), as in NoNoncense (the lease strategies here are exempt: the core stops their instances at the lease's deadline; below 30 s they renew at a third of the ttl) |
  | `:acquire_timeout` | 60000 | how long start-up retries before it fails (ms, or `:infinity`) |
  | `:on_lease_lost` | none | called with the reason (`:expired`, `:conflict`, `:illegal_ttl`, `:timeout` when start-up fails, the strategy's, …) after the instances are disabled |
  | `:enable_conflict_guard?` | `true` | start a `Nonceforge.MachineId.ConflictGuard` told by the manager |

  `machine_id/1` gives the id held now.

  ## Without a supervisor

  `id!/1` resolves a spec once, for `Nonceforge.init/1`'s `:machine_id`:

      iex> Nonceforge.MachineId.id!(7)
      7
      iex> System.put_env("POD_NAME", "worker-12")
      iex> Nonceforge.MachineId.id!({:env, "POD_NAME"})
      12

  | spec | the id |
  |---|---|
  | an integer | itself (0..511) |
  | `{:env, var}` | the number at the end of the environment variable's value (`worker-12` → 12) |
  | `{:node_list, list}` | this node's place in `list` read as a set, as NoNoncense reads it (see `Nonceforge.MachineId.Strategy.HostIdentifiers`) |
  | `{:node_list, list, ordered: true}` | this node's place in `list` in the order given — appending never renumbers |

  Every member of a cluster must get a different id: a fleet that mixes
  languages shares the 0..511 range (plan ranges, or lease).
  """

  use Supervisor
  alias Nonceforge.MachineId.{LeaseCache, LeaseManager}
  alias Nonceforge.MachineId.Strategy.HostIdentifiers

  @options ~w(name strategy strategy_opts instances lease_duration renew_interval acquire_timeout on_lease_lost enable_conflict_guard? min_ttl)a

  @doc false
  def child_spec(opts) do
    %{
      id: Keyword.get(opts, :name, __MODULE__),
      start: {__MODULE__, :start_link, [opts]},
      type: :supervisor
    }
  end

  @doc "Starts the tree: returns once the id is held and the instances are initialized."
  @spec start_link(keyword()) :: Supervisor.on_start()
  def start_link(opts) do
    opts = check!(opts)
    name = Keyword.get(opts, :name, __MODULE__)
    # Registered under `name`, as NoNoncense registers its tree.
    Supervisor.start_link(__MODULE__, {name, opts}, name: name)
  end

  @impl true
  def init({name, opts}) do
    manager = Module.concat(name, :LeaseManager)
    cache = Module.concat(name, :LeaseCache)

    lease =
      {LeaseManager,
       opts
       |> Keyword.drop([:enable_conflict_guard?])
       |> Keyword.put_new(:instances, [[]])
       |> Keyword.merge(name: manager, lease_cache: cache)}

    guard =
      {Nonceforge.MachineId.ConflictGuard,
       name: Module.concat(name, :ConflictGuard),
       machine_id: fn -> LeaseManager.machine_id(manager) end,
       on_conflict: fn -> LeaseManager.lease_lost(manager, :conflict) end}

    children =
      [{LeaseCache, name: cache}, lease] ++
        if Keyword.get(opts, :enable_conflict_guard?, true), do: [guard], else: []

    Supervisor.init(children, strategy: :rest_for_one)
  end

  @doc "The machine id the tree `name` holds now (`nil` while it holds none)."
  @spec machine_id(atom()) :: 0..511 | nil
  def machine_id(name \\ __MODULE__),
    do: LeaseManager.machine_id(Module.concat(name, :LeaseManager))

  @doc """
  The figures of the lease the tree `name` holds, as the fleet's series
  (`Nonceforge.metrics/1` has the instances'): with a `Nonceforge.MachineId.Strategy.Lease`
  store, its state, id, token, floor, start, renewals, lapses and why it was
  lost; `[]` with other strategies or while none is held.
  """
  @spec lease_metrics(atom()) :: [Nonceforge.Telemetry.series()]
  def lease_metrics(name \\ __MODULE__),
    do: LeaseManager.lease_metrics(Module.concat(name, :LeaseManager))

  @doc "Tells the tree `name` that its id may no longer be used: its instances are disabled at once."
  @spec lease_lost(atom(), term()) :: :ok
  def lease_lost(name \\ __MODULE__, reason \\ :external),
    do: LeaseManager.lease_lost(Module.concat(name, :LeaseManager), reason)

  defp check!(opts) do
    unless Keyword.keyword?(opts),
      do: raise(ArgumentError, "Nonceforge.MachineId takes a keyword list, got: #{inspect(opts)}")

    case Keyword.keys(opts) -- @options do
      [] ->
        :ok

      unknown ->
        raise ArgumentError,
              "Nonceforge.MachineId: unknown option(s) #{inspect(unknown)}; known: #{inspect(@options)}"
    end

    strategy = Keyword.get(opts, :strategy)

    unless is_atom(strategy) and not is_nil(strategy) and Code.ensure_loaded?(strategy) and
             function_exported?(strategy, :acquire, 2),
           do:
             raise(
               ArgumentError,
               "Nonceforge.MachineId: :strategy must be a module implementing Nonceforge.MachineId.Strategy, got: #{inspect(strategy)}"
             )

    instances = Keyword.get(opts, :instances, [[]])

    unless is_list(instances) and instances != [] and Enum.all?(instances, &Keyword.keyword?/1),
      do:
        raise(
          ArgumentError,
          "Nonceforge.MachineId: :instances must be a non-empty list of keyword lists (Nonceforge.init/1 options)"
        )

    names = Enum.map(instances, &Keyword.get(&1, :name, Nonceforge))

    if length(Enum.uniq(names)) != length(names),
      do:
        raise(
          ArgumentError,
          "Nonceforge.MachineId: two :instances have the same name (#{inspect(names)})"
        )

    if Enum.any?(instances, &Keyword.has_key?(&1, :machine_id)),
      do:
        raise(
          ArgumentError,
          "Nonceforge.MachineId: :instances take their machine_id from the strategy; remove :machine_id"
        )

    for key <- [:lease_duration, :renew_interval, :min_ttl],
        v = Keyword.get(opts, key),
        not is_nil(v) do
      unless is_integer(v) and v > 0,
        do:
          raise(
            ArgumentError,
            "Nonceforge.MachineId: :#{key} must be positive milliseconds, got: #{inspect(v)}"
          )
    end

    case Keyword.get(opts, :acquire_timeout, 60_000) do
      :infinity ->
        :ok

      v when is_integer(v) and v >= 0 ->
        :ok

      v ->
        raise ArgumentError,
              "Nonceforge.MachineId: :acquire_timeout must be milliseconds or :infinity, got: #{inspect(v)}"
    end

    case Keyword.get(opts, :on_lease_lost) do
      nil ->
        :ok

      f when is_function(f, 1) ->
        :ok

      f ->
        raise ArgumentError,
              "Nonceforge.MachineId: :on_lease_lost must be a function of one argument, got: #{inspect(f)}"
    end

    opts
  end

  @type spec ::
          0..511
          | {:env, String.t()}
          | {:node_list, [atom() | String.t()]}
          | {:node_list, [atom() | String.t()], keyword()}

  @doc """
  The machine id that `spec` gives this node; raises `ArgumentError` if there
  is none.

  A keyword list is NoNoncense 1.x's `MachineId.id!/1`, with its options and
  errors (`RuntimeError`): `:machine_id` (used as given when set), else this
  node's place in `:node_list` read as a set; `:max_nodes` (default 512)
  bounds it. `id!()` is `id!([])`.

      iex> Nonceforge.MachineId.id!(node_list: [:a, :b, "127.0.0.1", "192.0.2.1"])
      2
      iex> Nonceforge.MachineId.id!(machine_id: 10, node_list: [:a])
      10

      iex> Nonceforge.MachineId.id!(max_nodes: 2, node_list: [:a, :b, "127.0.0.1"])
      ** (RuntimeError) Node ID 2 out of range 0-1

      iex> Nonceforge.MachineId.id!(node_list: ["192.0.2.1"])
      ** (RuntimeError) machine ID could not be determined
  """
  @spec id!(spec() | keyword()) :: 0..511
  def id!(spec \\ [])

  def id!(id) when is_integer(id) and id in 0..511, do: id

  def id!(id) when is_integer(id),
    do: raise(ArgumentError, "machine ID out of range 0-511")

  def id!(opts) when is_list(opts) do
    unless Keyword.keyword?(opts),
      do:
        raise(
          ArgumentError,
          "id!/1 takes a keyword list (machine_id:, node_list:, max_nodes:) or a spec, got: #{inspect(opts)}"
        )

    max = Keyword.get(opts, :max_nodes) || 512

    id =
      case Keyword.get(opts, :machine_id) do
        nil ->
          set = :ordsets.from_list(Keyword.get(opts, :node_list) || [])

          case :ordsets.intersection(host_identifiers(), set) do
            [first | _] -> Enum.find_index(set, &(&1 == first))
            [] -> raise RuntimeError, "machine ID could not be determined"
          end

        id ->
          id
      end

    if is_integer(id) and id >= 0 and id < max,
      do: id,
      else: raise(RuntimeError, "Node ID #{id} out of range 0-#{max - 1}")
  end

  def id!({:env, var}) when is_binary(var), do: id!(env_number!(var))

  def id!({:node_list, list}) when is_list(list), do: node_list_id!(node_list: list)

  def id!({:node_list, list, opts}) when is_list(list) and is_list(opts),
    do: node_list_id!(node_list: list, ordered: Keyword.get(opts, :ordered, false))

  def id!(spec),
    do:
      raise(
        ArgumentError,
        "machine_id must be 0..511, {:env, var}, {:node_list, list}, {:node_list, list, ordered: true} or {:lease, url, opts}, got: #{inspect(spec)}"
      )

  @doc false
  # A spec's id in `Nonceforge.init/1`'s `layout: :wide` (0..65535): an
  # integer or `{:env, var}`; the other specs are 9-bit by nature.
  def wide_id!(id) when is_integer(id) and id in 0..65_535, do: id

  def wide_id!(id) when is_integer(id),
    do: raise(ArgumentError, "machine ID out of range 0-65535 (layout: :wide)")

  def wide_id!({:env, var}) when is_binary(var), do: wide_id!(env_number!(var))
  def wide_id!(spec), do: id!(spec)

  defp env_number!(var) do
    value =
      System.get_env(var) ||
        raise ArgumentError, "machine_id: environment variable #{var} is not set"

    case Regex.run(~r/(\d+)$/, value) do
      [_, digits] -> String.to_integer(digits)
      _ -> raise ArgumentError, "machine_id: #{var}=#{inspect(value)} does not end in a number"
    end
  end

  defp node_list_id!(opts) do
    case HostIdentifiers.acquire(1, opts) do
      {:ok, id, _, _} ->
        id

      {:error, reason} ->
        raise ArgumentError, "machine_id: #{reason} (this node: #{inspect(host_identifiers())})"
    end
  end

  @doc "This node's identifiers (see `Nonceforge.MachineId.Strategy.HostIdentifiers.host_identifiers/0`)."
  @spec host_identifiers() :: [atom() | String.t()]
  defdelegate host_identifiers, to: HostIdentifiers
end
