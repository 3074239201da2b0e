defmodule Nonceforge.ConflictGuard do
  @moduledoc """
  `Nonceforge.MachineId.ConflictGuard` under the name this package gave it
  first, with that name's defaults: registered as `Nonceforge.ConflictGuard`,
  and without `:machine_id` it guards the instance `:instance` (default
  `Nonceforge`), disabling it on a conflict:

      {Nonceforge.ConflictGuard, instance: Nonceforge, on_conflict: fn node -> ... end}

  New code (and code renamed from NoNoncense) uses
  `Nonceforge.MachineId.ConflictGuard`; both speak the same messages.
  """
  alias Nonceforge.MachineId.ConflictGuard

  @doc false
  def child_spec(opts),
    do: %{id: Keyword.get(opts, :name) || __MODULE__, start: {__MODULE__, :start_link, [opts]}}

  @doc "Starts the guard."
  @spec start_link(keyword()) :: GenServer.on_start()
  def start_link(opts \\ []) do
    {name, state} = ConflictGuard.options(opts, __MODULE__, :instance)
    GenServer.start_link(ConflictGuard, state, name: name)
  end

  @doc "Asks the guard for its state (tests, diagnostics)."
  @spec state(GenServer.server()) :: map()
  def state(server \\ __MODULE__), do: ConflictGuard.state(server)
end
