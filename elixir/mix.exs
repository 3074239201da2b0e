defmodule Nonceforge.MixProject do
  use Mix.Project

  def project do
    [
      app: :nonceforge,
      version: "0.1.0",
      elixir: "~> 1.14",
      start_permanent: Mix.env() == :prod,
      # Our own compiler step builds the NIF with cargo; no Hex package needed.
      compilers: [:nonceforge_nif] ++ Mix.compilers(),
      deps: [],
      elixirc_paths: if(Mix.env() == :test, do: ["lib", "test/support"], else: ["lib"]),
      description:
        "Nonces, external ids and time-prefixed ids on the nonceforge core: a drop-in for NoNoncense"
    ]
  end

  def application do
    [extra_applications: [:logger, :crypto]]
  end
end

defmodule Mix.Tasks.Compile.NonceforgeNif do
  @shortdoc "Builds the nonceforge NIF with cargo and puts it in priv/"
  @moduledoc """
  Runs `cargo build --release -p nonceforge-elixir` in the repository this
  package sits in and copies the library to `priv/nonceforge_nif.so`, where
  `Nonceforge` loads it with `:erlang.load_nif/2`. Cargo decides what to
  rebuild. Set `NONCEFORGE_CARGO` to use another cargo, `CARGO_TARGET_DIR` as
  usual.
  """
  use Mix.Task.Compiler

  @impl true
  def run(_args) do
    root = Path.expand("..", __DIR__)
    cargo = System.get_env("NONCEFORGE_CARGO", "cargo")
    target = System.get_env("CARGO_TARGET_DIR", Path.join(root, "target"))

    unless System.find_executable(cargo) do
      Mix.raise(
        "nonceforge: cargo not found (#{cargo}); install Rust 1.89 or newer to build the NIF"
      )
    end

    args = ["build", "--release", "--locked", "-p", "nonceforge-elixir"]

    case System.cmd(cargo, args, cd: root, stderr_to_stdout: true) do
      {_, 0} ->
        :ok

      {out, code} ->
        Mix.shell().error(out)
        Mix.raise("nonceforge: cargo build exited with #{code}")
    end

    ext = if match?({:unix, :darwin}, :os.type()), do: "dylib", else: "so"
    src = Path.join([target, "release", "libnonceforge_nif." <> ext])
    dst = Path.join(Mix.Project.app_path(), "priv/nonceforge_nif.so")
    File.mkdir_p!(Path.dirname(dst))

    if not File.exists?(dst) or File.stat!(src).mtime > File.stat!(dst).mtime do
      File.cp!(src, dst)
    end

    {:ok, []}
  end
end
