defmodule Nonceforge.Test.Beam do
  @moduledoc false
  # Another BEAM, an OS process of its own, running `script` with this
  # package on its code path; returns the port once it printed `ready` (and
  # what followed it on that line).

  def start(script, args \\ [], ready \\ "up") do
    ebin = :code.lib_dir(:nonceforge) |> Path.join("ebin")
    argv = args ++ ["-pa", ebin, "-e", script]

    port =
      Port.open({:spawn_executable, System.find_executable("elixir")}, [
        :binary,
        :exit_status,
        args: argv
      ])

    wait(port, ready)
  end

  defp wait(port, ready) do
    receive do
      {^port, {:data, data}} ->
        case String.split(data, ready, parts: 2) do
          [_, rest] -> {port, rest |> String.split("\n") |> hd() |> String.trim()}
          _ -> wait(port, ready)
        end
    after
      30_000 -> raise "the other BEAM did not start"
    end
  end

  def kill(port) do
    {:os_pid, pid} = Port.info(port, :os_pid)
    System.cmd("kill", ["-9", "#{pid}"])
  end
end
