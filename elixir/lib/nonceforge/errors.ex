defmodule Nonceforge.Errors.UninitializedError do
  @moduledoc """
  Raised by a call on an instance that `Nonceforge.init/1` has not set up.
  As NoNoncense's: `raise Nonceforge.Errors.UninitializedError, name` gives
  "instance <name> is not initialized".
  """
  defexception message: "instance Nonceforge is not initialized: call Nonceforge.init/1 first"

  @impl true
  def exception(name) when is_atom(name),
    do: %__MODULE__{
      message: "instance #{inspect(name)} is not initialized: call Nonceforge.init/1 first"
    }

  def exception(opts) when is_list(opts), do: struct!(__MODULE__, opts)
end

defmodule Nonceforge.Errors.DisabledError do
  @moduledoc """
  Raised by every call on an instance that may not issue: its lease lapsed or
  was lost, or it was disabled (`Nonceforge.disable/1`, a conflict found by
  `Nonceforge.ConflictGuard`). As NoNoncense's: `raise
  Nonceforge.Errors.DisabledError, name` gives "instance <name> is disabled".
  """
  defexception message: "instance Nonceforge is disabled"

  @impl true
  def exception(name) when is_atom(name),
    do: %__MODULE__{
      message:
        "instance #{inspect(name)} is disabled: its lease lapsed or was lost, or it was disabled"
    }

  def exception(opts) when is_list(opts), do: struct!(__MODULE__, opts)
end
