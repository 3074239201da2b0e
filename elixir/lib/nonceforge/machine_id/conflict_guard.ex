defmodule Nonceforge.MachineId.ConflictGuard do
  @moduledoc """
  Checks, each time another node connects, that it does not use this node's
  machine id; on a clash, the newer of the two nodes resolves it
  (`on_conflict`). NoNoncense 2.0's `NoNoncense.MachineId.ConflictGuard`,
  under our name, with its options, defaults, messages and wire format.
  `Nonceforge.MachineId` starts one as `<name>.ConflictGuard`, told by the
  tree's lease manager; started on its own (as NoNoncense 1.x's README does):

      {Nonceforge.MachineId.ConflictGuard, [machine_id: 7]}

  Options:

  | option | default | |
  |---|---|---|
  | `:machine_id` | required (unless `:instance`) | an integer, or a 0-arity function giving it (`nil` while there is none) |
  | `:on_conflict` | halt the node, `:erlang.halt(111)` (with `:instance`: nothing more) | 0-arity, or 1-arity given the other node |
  | `:name` | `Nonceforge.MachineId.ConflictGuard` | the registered name: the same on every node |
  | `:instance` | none | a `Nonceforge` instance to disable on a conflict; its machine id is the default `:machine_id` |

  Started without `:machine_id` or `:instance` it raises `ArgumentError`
  ("machine ID is required as a literal or getter/0"), as NoNoncense's does.

  ## Beside NoNoncense nodes (a rolling switch)

  A guard speaks NoNoncense's message, `{:id_from, node, %{machine_id: id,
  init_at: t, …}}` cast to the guard of the same name on the other node, and
  also sends it to `NoNoncense.MachineId.ConflictGuard` there; on its own node
  it answers to that name too (a forwarding process registered under it, when
  the name is free). So NoNoncense and Nonceforge nodes check each other
  whichever the guard's name is.

  The newer node (the later `init_at`) resolves a clash. NoNoncense 2.0 sends
  `init_at` in microseconds, 1.x in milliseconds: a guard reads either (a
  value below 10^14 is milliseconds — 1973 in microseconds), compares in
  microseconds, sends microseconds (2.0's unit) and, to a node that sent
  milliseconds, sends again in milliseconds so that a 1.x node decides on
  comparable numbers too. Ties go to the node name, so two guards never both
  stay.

  Needs distributed Erlang (`--name`/`--sname` and a shared cookie). Leased
  machine ids do not need it (the store keeps them apart), but it does no harm.
  """
  use GenServer
  require Logger
  alias Nonceforge.Telemetry

  @nononcense_name NoNoncense.MachineId.ConflictGuard
  # Below this an init_at is milliseconds (1.x): 10^14 µs is 1973-03-03.
  @ms_below 100_000_000_000_000

  @type opt ::
          {:name, GenServer.name()}
          | {:on_conflict, (() -> any()) | (node() -> any())}
          | {:machine_id, non_neg_integer() | (() -> non_neg_integer() | nil)}
          | {:instance, atom()}

  @doc false
  def child_spec(opts),
    do: %{id: Keyword.get(opts, :name) || __MODULE__, start: {__MODULE__, :start_link, [opts]}}

  @doc "Starts the guard."
  @spec start_link([opt()]) :: GenServer.on_start()
  def start_link(opts \\ []) do
    {name, state} = options(opts, __MODULE__, :required)
    GenServer.start_link(__MODULE__, state, name: name)
  end

  @doc false
  # The options as a state. `default_id`: :required (NoNoncense's rule), or
  # :instance (Nonceforge.ConflictGuard's: the id of `:instance`, default
  # Nonceforge).
  def options(opts, default_name, default_id) do
    unless Keyword.keyword?(opts),
      do: raise(ArgumentError, "ConflictGuard takes a keyword list, got: #{inspect(opts)}")

    name = Keyword.get(opts, :name) || default_name
    instance = Keyword.get(opts, :instance)

    unless is_nil(instance) or is_atom(instance),
      do: raise(ArgumentError, "instance must be an atom, got: #{inspect(instance)}")

    instance =
      if is_nil(instance) and default_id == :instance and is_nil(Keyword.get(opts, :machine_id)),
        do: Nonceforge,
        else: instance

    machine_id =
      case Keyword.get(opts, :machine_id) do
        nil when not is_nil(instance) ->
          fn -> Nonceforge.machine_id(instance) end

        nil ->
          raise ArgumentError, "machine ID is required as a literal or getter/0"

        id when is_integer(id) and id in 0..511 ->
          fn -> id end

        f when is_function(f, 0) ->
          f

        other ->
          raise ArgumentError,
                "machine_id must be 0..511 or a 0-arity function, got: #{inspect(other)}"
      end

    on_conflict =
      case Keyword.get(opts, :on_conflict) do
        nil when is_nil(instance) ->
          fn _node -> :erlang.halt(111) end

        nil ->
          fn _node -> :ok end

        f when is_function(f, 0) ->
          fn _node -> f.() end

        f when is_function(f, 1) ->
          f

        f ->
          raise ArgumentError,
                "on_conflict must be a function of 0 or 1 arguments, got: #{inspect(f)}"
      end

    state = %{
      name: name,
      instance: instance,
      machine_id: machine_id,
      on_conflict: on_conflict,
      # NoNoncense 2.0's field and unit.
      init_at: System.system_time(:microsecond),
      # {node, init_at} announcements already compared: a Nonceforge peer
      # sends its one to two names, and this guard may answer to both.
      seen: MapSet.new()
    }

    {name, state}
  end

  @impl true
  def init(state) do
    :ok = :net_kernel.monitor_nodes(true)
    answer_to_nononcense_name(state)
    for node <- Node.list(), do: send(self(), {:nodeup, node})
    {:ok, state}
  end

  # A process under NoNoncense's name that hands its casts to this guard, so
  # that NoNoncense nodes (which cast to that name) reach it. A forwarder left
  # by a guard that stopped (or restarted) is taken over, not raced with.
  defp answer_to_nononcense_name(%{name: @nononcense_name}), do: :ok

  defp answer_to_nononcense_name(_state) do
    guard = self()

    case Process.whereis(@nononcense_name) do
      nil ->
        start_forwarder(guard)

      pid ->
        ref = Process.monitor(pid)
        send(pid, {:nonceforge_forward_to, guard, ref})

        receive do
          {^ref, :ok} ->
            Process.demonitor(ref, [:flush])
            :ok

          {:DOWN, ^ref, :process, _, _} ->
            start_forwarder(guard)
        after
          # Not a forwarder (NoNoncense's own guard runs on this node): leave it.
          500 ->
            Process.demonitor(ref, [:flush])
            :ok
        end
    end
  end

  defp start_forwarder(guard) do
    pid = spawn(fn -> forward(guard, Process.monitor(guard)) end)

    try do
      Process.register(pid, @nononcense_name)
      :ok
    rescue
      # Taken meanwhile: NoNoncense itself, or another tree's guard.
      ArgumentError ->
        Process.exit(pid, :kill)
        :ok
    end
  end

  defp forward(guard, ref) do
    receive do
      {:"$gen_cast", msg} ->
        GenServer.cast(guard, msg)
        forward(guard, ref)

      {:nonceforge_forward_to, new_guard, reply} ->
        Process.demonitor(ref, [:flush])
        send(new_guard, {reply, :ok})
        forward(new_guard, Process.monitor(new_guard))

      {:DOWN, ^ref, :process, _, _} ->
        :ok

      _other ->
        forward(guard, ref)
    end
  end

  @impl true
  def handle_info({:nodeup, node}, state) do
    announce(state, node, :microsecond)
    {:noreply, state}
  end

  def handle_info({:nodedown, node}, state),
    do: {:noreply, %{state | seen: MapSet.reject(state.seen, fn {n, _} -> n == node end)}}

  def handle_info(msg, state), do: unknown(:handle_info, msg, state)

  # NoNoncense's message: our state with the machine id in it, to the guard of
  # our name and to NoNoncense's.
  defp announce(state, node, unit, to \\ nil) do
    init_at = if unit == :millisecond, do: div(state.init_at, 1000), else: state.init_at

    msg =
      {:id_from, Node.self(),
       %{
         machine_id: mine(state),
         init_at: init_at,
         name: state.name
       }}

    for name <- Enum.uniq(List.wrap(to || [state.name, @nononcense_name])),
        do: cast({name, node}, msg)
  end

  # A cast that never connects to a node nor waits on a busy link (the peer
  # either is connected — it just joined or just wrote — or is gone).
  defp cast(dest, msg) do
    :erlang.send(dest, {:"$gen_cast", msg}, [:noconnect, :nosuspend])
  rescue
    ArgumentError -> :ok
  end

  @impl true
  def handle_cast({:id_from, node, %{machine_id: id, init_at: started} = peer}, state)
      when is_atom(node) and is_integer(started) do
    state = compare(node, id, microseconds(started), state)

    # A NoNoncense 1.x node counts milliseconds: answer it in its unit too.
    if started < @ms_below and node != Node.self(),
      do: announce(state, node, :millisecond, Map.get(peer, :name) || @nononcense_name)

    {:noreply, state}
  end

  # Nonceforge 0.1's own message.
  def handle_cast({:id_from, node, id, started}, state)
      when is_atom(node) and is_integer(started),
      do: {:noreply, compare(node, id, microseconds(started), state)}

  def handle_cast(msg, state), do: unknown(:handle_cast, msg, state)

  defp microseconds(t) when t < @ms_below, do: t * 1000
  defp microseconds(t), do: t

  defp compare(node, id, started, state) do
    if MapSet.member?(state.seen, {node, started}),
      do: state,
      else: check(node, id, started, %{state | seen: MapSet.put(state.seen, {node, started})})
  end

  defp check(node, id, started, state) do
    mine = mine(state)

    cond do
      is_nil(mine) ->
        Logger.debug("Node #{node} joined but this node has no machine ID to compare with")
        Telemetry.peer_checked(:local_id_unavailable)

      id != mine ->
        Logger.debug("Node #{node} with machine ID #{id} joined")
        Telemetry.peer_checked(:different)

      # The newer resolves it; on a tie in microseconds, the node names decide.
      {state.init_at, Node.self()} > {started, node} ->
        Logger.critical("Node #{node} has a conflicting ID; this node will resolve the conflict")
        Telemetry.peer_checked(:match)
        Telemetry.conflict(:local_node)
        if state.instance, do: Nonceforge.disable(state.instance)
        state.on_conflict.(node)

      true ->
        Logger.critical("Node #{node} has a conflicting ID; it will resolve the conflict")
        Telemetry.peer_checked(:match)
        Telemetry.conflict(:remote_node)
    end

    state
  end

  defp mine(state) do
    state.machine_id.()
  rescue
    _ -> nil
  catch
    :exit, _ -> nil
  end

  defp unknown(callback, msg, state) do
    Logger.warning("Unknown #{callback} message received: #{inspect(msg)}")
    {:noreply, state}
  end

  @doc "Asks the guard for its state (tests, diagnostics)."
  @spec state(GenServer.server()) :: map()
  def state(server \\ __MODULE__), do: GenServer.call(server, :state)

  @impl true
  def handle_call(:state, _from, state), do: {:reply, state, state}
end
