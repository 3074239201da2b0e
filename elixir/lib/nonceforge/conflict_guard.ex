defmodule Nonceforge.ConflictGuard do
  @moduledoc """
  Checks, each time another node connects, that it does not use this node's
  machine id; on a clash, the newer of the two nodes is told (`on_conflict`).
  `Nonceforge.MachineId` starts one as `<name>.ConflictGuard` and has it disable
  the tree's instances; started on its own, it takes NoNoncense's options or
  ours:

      # NoNoncense's: a machine id (or a 0-arity getter) and a 0-arity on_conflict
      {Nonceforge.ConflictGuard, machine_id: 7, on_conflict: fn -> :erlang.halt(111) end}
      # ours: the instance to disable, and a 1-arity callback given the other node
      {Nonceforge.ConflictGuard, instance: Nonceforge, on_conflict: fn node -> ... end}

  Options: `:name` (registered name, default `Nonceforge.ConflictGuard`; the same
  on every node), `:machine_id` (an integer or a 0-arity function; default: the
  id of `:instance`), `:instance` (default `Nonceforge`; disabled on a
  conflict), `:on_conflict` (0- or 1-arity; with `:machine_id` and no
  `:instance` the default halts the node with status 111, as NoNoncense's).

  **Beside NoNoncense during a switch.** Each guard also sends NoNoncense's
  message (`{:id_from, node, %{machine_id: …, init_at: …}}`) to
  `NoNoncense.MachineId.ConflictGuard` on the other node, and understands it
  when it arrives: register one guard under that name too (or start ours
  there) and old and new nodes check each other. A message it does not know
  is logged and ignored, never a crash.

  Needs distributed Erlang (`--name`/`--sname` and a shared cookie). Leased
  machine ids do not need it (the store keeps them apart), but it does no harm.
  """
  use GenServer
  require Logger
  alias Nonceforge.Telemetry

  @nononcense_name NoNoncense.MachineId.ConflictGuard

  @doc false
  def child_spec(opts),
    do: %{id: Keyword.get(opts, :name, __MODULE__), start: {__MODULE__, :start_link, [opts]}}

  @doc "Starts the guard."
  @spec start_link(keyword()) :: GenServer.on_start()
  def start_link(opts \\ []) do
    name = Keyword.get(opts, :name, __MODULE__)
    instance = Keyword.get(opts, :instance)

    unless is_nil(instance) or is_atom(instance),
      do: raise(ArgumentError, "instance must be an atom, got: #{inspect(instance)}")

    machine_id =
      case Keyword.get(opts, :machine_id) do
        nil ->
          fn -> Nonceforge.machine_id(instance || Nonceforge) end

        id when is_integer(id) and id in 0..511 ->
          fn -> id end

        f when is_function(f, 0) ->
          f

        other ->
          raise ArgumentError,
                "machine_id must be 0..511 or a 0-arity function, got: #{inspect(other)}"
      end

    on_conflict =
      case {Keyword.get(opts, :on_conflict),
            Keyword.has_key?(opts, :machine_id) and is_nil(instance)} do
        {nil, true} ->
          fn _node -> :erlang.halt(111) end

        {nil, false} ->
          fn _node -> :ok end

        {f, _} when is_function(f, 0) ->
          fn _node -> f.() end

        {f, _} when is_function(f, 1) ->
          f

        {f, _} ->
          raise ArgumentError,
                "on_conflict must be a function of 0 or 1 arguments, got: #{inspect(f)}"
      end

    state = %{
      name: name,
      instance:
        if(Keyword.has_key?(opts, :machine_id), do: instance, else: instance || Nonceforge),
      machine_id: machine_id,
      on_conflict: on_conflict,
      started: System.system_time(:microsecond)
    }

    GenServer.start_link(__MODULE__, state, name: name)
  end

  @impl true
  def init(state) do
    :ok = :net_kernel.monitor_nodes(true)
    for node <- Node.list(), do: send(self(), {:nodeup, node})
    {:ok, state}
  end

  @impl true
  def handle_info({:nodeup, node}, state) do
    id = mine(state)
    GenServer.cast({state.name, node}, {:id_from, Node.self(), id, state.started})

    if state.name != @nononcense_name,
      do:
        GenServer.cast(
          {@nononcense_name, node},
          {:id_from, Node.self(), %{machine_id: id, init_at: state.started}}
        )

    {:noreply, state}
  end

  def handle_info({:nodedown, _node}, state), do: {:noreply, state}

  def handle_info(msg, state), do: unknown(:info, msg, state)

  @impl true
  # Ours, and NoNoncense's (a map with :machine_id and :init_at, microseconds).
  def handle_cast({:id_from, node, id, started}, state)
      when is_atom(node) and is_integer(started),
      do: {:noreply, compare(node, id, started, state)}

  def handle_cast({:id_from, node, %{machine_id: id, init_at: started}}, state)
      when is_atom(node) and is_integer(started),
      do: {:noreply, compare(node, id, started, state)}

  def handle_cast(msg, state), do: unknown(:cast, msg, state)

  defp compare(node, id, started, state) do
    mine = mine(state)

    cond do
      is_nil(mine) ->
        Telemetry.peer_checked(:local_id_unavailable)

      id != mine ->
        Telemetry.peer_checked(:different)

      {state.started, Node.self()} > {started, node} ->
        Telemetry.peer_checked(:match)
        Telemetry.conflict(:local_node)

        Logger.critical(
          "Nonceforge: node #{node} uses machine id #{id} too; this node is the newer and stops"
        )

        if state.instance, do: Nonceforge.disable(state.instance)
        state.on_conflict.(node)

      true ->
        Telemetry.peer_checked(:match)
        Telemetry.conflict(:remote_node)

        Logger.critical(
          "Nonceforge: node #{node} uses machine id #{id} too; it is the newer and stops"
        )
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

  defp unknown(kind, msg, state) do
    Logger.warning("Nonceforge.ConflictGuard: unknown #{kind} message ignored: #{inspect(msg)}")
    {:noreply, state}
  end

  @doc "Asks the guard for its state (tests, diagnostics)."
  @spec state(GenServer.server()) :: map()
  def state(server \\ __MODULE__), do: GenServer.call(server, :state)

  @impl true
  def handle_call(:state, _from, state), do: {:reply, state, state}
end
