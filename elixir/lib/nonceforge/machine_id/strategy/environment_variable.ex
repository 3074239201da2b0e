defmodule Nonceforge.MachineId.Strategy.EnvironmentVariable do
  @moduledoc """
  The machine id from the number that ends an environment variable's value —
  a Kubernetes StatefulSet's pod name (`nonce-worker-3` → 3), exposed through
  the Downward API:

      {Nonceforge.MachineId,
       strategy: Nonceforge.MachineId.Strategy.EnvironmentVariable,
       strategy_opts: [variable_name: "POD_NAME"],
       instances: [[base_key: System.fetch_env!("BASE_KEY")]]}

  Options: `:variable_name` (required). Only safe where every running member
  has a different suffix (one StatefulSet does; two reuse ordinals, and
  orchestrators that overlap old and new allocations may repeat an index):
  otherwise lease. The id must be within 0..511.
  """
  use Nonceforge.MachineId.Strategy

  @impl true
  def acquire(lease_duration, opts) do
    var = Keyword.get(opts, :variable_name)

    with {:var, true} <- {:var, is_binary(var)},
         {:env, {:ok, value}} <- {:env, System.fetch_env(var)},
         {:digits, [digits]} <- {:digits, Regex.run(~r/\d+$/, value)},
         {:range, id} when id in 0..511 <- {:range, String.to_integer(digits)} do
      {:ok, id, :static, lease_duration}
    else
      {:var, false} ->
        {:error, "strategy_opts :variable_name must be a string"}

      {:env, :error} ->
        {:error, "env var #{var} not found"}

      {:digits, _} ->
        {:error, "could not parse #{var}=#{System.get_env(var)}"}

      {:range, id} ->
        {:error, "#{var} ends in #{id}, outside the machine id range 0..511"}
    end
  end
end
