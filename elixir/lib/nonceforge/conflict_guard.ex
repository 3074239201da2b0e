defmodule Nonceforge.ConflictGuard do
  @moduledoc """
  Checks, each time another node connects, that it does not use this node's
  machine id, and on a clash disables the newer of the two instances — its
  calls then raise `Nonceforge.Errors.DisabledError` — instead of letting two
  nodes issue the same nonces. (NoNoncense halts the newer node; here the VM
  stays up and you decide, through `:on_conflict`.)

      children = [
        {Nonceforge.ConflictGuard, instance: Nonceforge}
      ]

  Options: `:instance` (the `Nonceforge` instance name, default `Nonceforge`),
  `:name` (the guard's registered name, default `Nonceforge.ConflictGuard`: it
  must be the same on every node), `:on_conflict` (a 1-arity function called
  with the other node, on the node that was disabled).

  Needs distributed Erlang (`--name`/`--sname` and a shared cookie). Leased
  machine ids do not need it (the store keeps them apart), but it does no harm.
  """
  use GenServer
  require Logger

  @doc false
  def child_spec(opts),
    do: %{id: Keyword.get(opts, :name, __MODULE__), start: {__MODULE__, :start_link, [opts]}}

  @doc "Starts the guard."
  @spec start_link(keyword()) :: GenServer.on_start()
  def start_link(opts \\ []) do
    name = Keyword.get(opts, :name, __MODULE__)
    instance = Keyword.get(opts, :instance, Nonceforge)
    on_conflict = Keyword.get(opts, :on_conflict, fn _node -> :ok end)
    unless is_atom(instance), do: raise(ArgumentError, "instance must be an atom")

    unless is_function(on_conflict, 1),
      do: raise(ArgumentError, "on_conflict must be a function of one argument")

    started = System.system_time(:microsecond)
    state = %{name: name, instance: instance, on_conflict: on_conflict, started: started}
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
    GenServer.cast(
      {state.name, node},
      {:id_from, Node.self(), Nonceforge.machine_id(state.instance), state.started}
    )

    {:noreply, state}
  end

  def handle_info({:nodedown, _node}, state), do: {:noreply, state}

  @impl true
  def handle_cast({:id_from, node, id, started}, state) do
    mine = Nonceforge.machine_id(state.instance)

    cond do
      id != mine ->
        :ok

      {state.started, Node.self()} > {started, node} ->
        Logger.critical(
          "Nonceforge: node #{node} uses machine id #{id} too; disabling #{inspect(state.instance)} here"
        )

        Nonceforge.disable(state.instance)
        state.on_conflict.(node)

      true ->
        Logger.critical(
          "Nonceforge: node #{node} uses machine id #{id} too; it disables its instance"
        )
    end

    {:noreply, state}
  end

  @doc "Asks the guard for its state (tests, diagnostics)."
  @spec state(GenServer.server()) :: map()
  def state(server \\ __MODULE__), do: GenServer.call(server, :state)

  @impl true
  def handle_call(:state, _from, state), do: {:reply, state, state}
end
