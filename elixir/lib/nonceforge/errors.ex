defmodule Nonceforge.Errors.UninitializedError do
  @moduledoc """
  Raised by a call on an instance that `Nonceforge.init/1` has not set up (as
  NoNoncense raises it).
  """
  defexception message: "Nonceforge instance is not initialized: call Nonceforge.init/1 first"
end

defmodule Nonceforge.Errors.DisabledError do
  @moduledoc """
  Raised by every call on an instance that may not issue: its lease lapsed or
  was lost, or it was disabled (`Nonceforge.disable/1`, `Nonceforge.ConflictGuard`).
  """
  defexception message: "this Nonceforge instance is disabled"
end
