defmodule Nonceforge.Test.Eventually do
  @moduledoc false
  # Polls `f` every 50 ms until it returns true or `timeout_ms` has passed; for
  # what the code under test does on a timer of its own, so that a loaded
  # machine makes a test slower, never red.

  def eventually(f, timeout_ms \\ 5_000) do
    deadline = System.monotonic_time(:millisecond) + timeout_ms
    poll(f, deadline)
  end

  defp poll(f, deadline) do
    cond do
      f.() -> true
      System.monotonic_time(:millisecond) >= deadline -> false
      true -> Process.sleep(50) && poll(f, deadline)
    end
  end
end
