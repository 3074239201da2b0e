defmodule Nonceforge.MachineId.LeaseCache do
  @moduledoc """
  The lease a `Nonceforge.MachineId` tree holds, kept apart from its lease
  manager (NoNoncense 2.0's `NoNoncense.MachineId.LeaseCache`, under our name).

  When the manager crashes and its supervisor restarts it, the new manager
  finds the lease here and renews it once instead of taking another of the
  512 machine ids. It lives in memory: a node that dies or is killed loses it
  (the store's lease then lapses as usual). `Nonceforge.MachineId` starts one
  as `<name>.LeaseCache`.
  """
  use Agent

  @doc "Starts an empty cache."
  @spec start_link(keyword()) :: Agent.on_start()
  def start_link(opts \\ []),
    do: Agent.start_link(fn -> nil end, name: Keyword.get(opts, :name) || __MODULE__)

  @doc "Replaces what is cached."
  @spec put(GenServer.server(), term()) :: :ok
  def put(server \\ __MODULE__, term), do: Agent.update(server, fn _ -> term end)

  @doc "What is cached (`nil` until a lease was put)."
  @spec get(GenServer.server()) :: term()
  def get(server \\ __MODULE__), do: Agent.get(server, & &1)
end
