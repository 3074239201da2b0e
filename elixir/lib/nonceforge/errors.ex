defmodule Nonceforge.Errors.UninitializedError do
  @moduledoc """
  Raised by a call on an instance that `Nonceforge.init/1` has not set up.
  As NoNoncense's: `raise Nonceforge.Errors.UninitializedError, name` gives
  "instance <name> is not initialized".
  """
  defexception message: "instance Nonceforge is not initialized"

  # NoNoncense's words exactly (its users' tests match them): the name as
  # interpolated, `my_factory` or `Nonceforge`. Call `Nonceforge.init/1` (or
  # start `Nonceforge.MachineId`) for that name first.
  @impl true
  def exception(name) when is_atom(name),
    do: %__MODULE__{message: "instance #{name} is not initialized"}

  def exception(opts) when is_list(opts), do: struct!(__MODULE__, opts)
end

defmodule Nonceforge.Errors.DisabledError do
  @moduledoc """
  Raised by every call on an instance that may not issue: its lease lapsed or
  was lost, or it was disabled (`Nonceforge.disable/1`, a conflict found by
  `Nonceforge.MachineId.ConflictGuard`). As NoNoncense's: `raise
  Nonceforge.Errors.DisabledError, name` gives "instance <name> is disabled".
  """
  defexception message: "instance Nonceforge is disabled"

  # NoNoncense's words exactly. Why it is disabled — a lease that lapsed or
  # was lost, a conflict, disable/1 — is in the log (`Lease of ID N lost: …`).
  @impl true
  def exception(name) when is_atom(name),
    do: %__MODULE__{message: "instance #{name} is disabled"}

  def exception(opts) when is_list(opts), do: struct!(__MODULE__, opts)
end
