defmodule :telemetry do
  @moduledoc false
  # A stand-in for the :telemetry library (no Hex here): what
  # Nonceforge.Telemetry finds loaded in a host application that has it. It
  # forwards each event to the process registered as :telemetry_listener.
  def execute(event, measurements, metadata) do
    case Process.whereis(:telemetry_listener) do
      nil -> :ok
      pid -> send(pid, {:telemetry, event, measurements, metadata})
    end

    :ok
  end
end
