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
        "Nonces, external ids and time-prefixed ids on the nonceforge core: a drop-in for NoNoncense",
      package: package()
    ]
  end

  # What `mix hex.build` packs, and what `mix nonceforge.package` copies: the
  # Elixir code, the NIF's Rust sources with their lock file (native/, made by
  # `mix nonceforge.vendor`), and prebuilt NIFs with their checksums where the
  # package carries them (priv/native/).
  defp package do
    [
      files: ~w(lib native priv/native mix.exs README.md .formatter.exs),
      licenses: ["MIT", "Apache-2.0"]
    ]
  end

  def application do
    [extra_applications: [:logger, :crypto]]
  end
end

defmodule Nonceforge.Build do
  @moduledoc false
  # Where the NIF comes from, in this order: a prebuilt library for this
  # platform that the package carries (priv/native/, its sha256 checked against
  # checksums.txt); else cargo, in the repository this directory sits in (a
  # checkout) or on the package's vendored sources (native/, a package).

  @root Path.expand("..", __DIR__)

  def platform, do: to_string(:erlang.system_info(:system_architecture))
  def prebuilt_dir, do: Path.join(__DIR__, "priv/native")
  def prebuilt_name(platform \\ platform()), do: "nonceforge_nif-#{platform}.so"

  def checkout?,
    do:
      File.exists?(Path.join(@root, "crates/nonceforge-elixir/Cargo.toml")) and
        File.exists?(Path.join(@root, "Cargo.toml"))

  def native_dir, do: Path.join(__DIR__, "native")

  # {:prebuilt, path} | {:cargo, dir} | {:error, message}
  def source do
    prebuilt = Path.join(prebuilt_dir(), prebuilt_name())

    cond do
      File.exists?(prebuilt) ->
        check_prebuilt(prebuilt)

      checkout?() ->
        {:cargo, @root}

      File.exists?(Path.join(native_dir(), "Cargo.toml")) ->
        {:cargo, native_dir()}

      true ->
        {:error,
         "nonceforge: neither a prebuilt NIF for #{platform()} nor the NIF's Rust sources (native/) are in this package"}
    end
  end

  defp check_prebuilt(path) do
    sums = Path.join(prebuilt_dir(), "checksums.txt")
    name = Path.basename(path)

    want =
      if File.exists?(sums),
        do:
          Enum.find_value(File.read!(sums) |> String.split("\n", trim: true), fn line ->
            case String.split(line) do
              [sum, ^name] -> String.downcase(sum)
              _ -> nil
            end
          end)

    got = :crypto.hash(:sha256, File.read!(path)) |> Base.encode16(case: :lower)

    cond do
      is_nil(want) ->
        {:error,
         "nonceforge: #{name} has no line in priv/native/checksums.txt; refusing to load it"}

      want != got ->
        {:error,
         "nonceforge: #{name} does not match its checksum (#{got} != #{want}); the package was altered"}

      true ->
        {:prebuilt, path}
    end
  end

  def cargo_build(dir) do
    cargo = System.get_env("NONCEFORGE_CARGO", "cargo")

    unless System.find_executable(cargo) do
      Mix.raise("""
      nonceforge: no prebuilt NIF for #{platform()} in this package, and cargo (#{cargo}) is not on the PATH to build it from source.
      Install Rust 1.89 or newer (https://rustup.rs) and compile again.
      """)
    end

    target = System.get_env("CARGO_TARGET_DIR", Path.join(dir, "target"))
    args = ["build", "--release", "--locked", "-p", "nonceforge-elixir"]
    Mix.shell().info("nonceforge: building the NIF with cargo in #{dir}")

    case System.cmd(cargo, args,
           cd: dir,
           stderr_to_stdout: true,
           env: [{"CARGO_TARGET_DIR", target}]
         ) do
      {_, 0} ->
        :ok

      {out, code} ->
        Mix.shell().error(out) && Mix.raise("nonceforge: cargo build exited with #{code}")
    end

    ext = if match?({:unix, :darwin}, :os.type()), do: "dylib", else: "so"
    Path.join([target, "release", "libnonceforge_nif." <> ext])
  end

  def root, do: @root
end

defmodule Mix.Tasks.Compile.NonceforgeNif do
  @shortdoc "Puts the nonceforge NIF in priv/: prebuilt (checked) or built with cargo"
  @moduledoc """
  Puts the NIF at `priv/nonceforge_nif.so`, where `Nonceforge` loads it with
  `:erlang.load_nif/2`: the package's prebuilt library for this platform when
  it carries one (its sha256 checked against `priv/native/checksums.txt`),
  else one built with cargo — in the repository when this is a checkout, on
  the vendored sources in `native/` when it is a package. Cargo decides what
  to rebuild. `NONCEFORGE_CARGO` names another cargo, `CARGO_TARGET_DIR` works
  as usual.
  """
  use Mix.Task.Compiler

  @impl true
  def run(_args) do
    src =
      case Nonceforge.Build.source() do
        {:prebuilt, path} -> path
        {:cargo, dir} -> Nonceforge.Build.cargo_build(dir)
        {:error, message} -> Mix.raise(message)
      end

    dst = Path.join(Mix.Project.app_path(), "priv/nonceforge_nif.so")
    File.mkdir_p!(Path.dirname(dst))

    if not File.exists?(dst) or File.read!(src) != File.read!(dst) do
      File.cp!(src, dst)
    end

    {:ok, []}
  end
end

defmodule Mix.Tasks.Nonceforge.Vendor do
  @shortdoc "Copies the NIF's Rust sources and lock file into native/"
  @moduledoc """
  `mix nonceforge.vendor` (in a checkout): writes `native/`, a cargo workspace
  of the three crates the NIF is built from (`nonceforge`, `nonceforge-lease`,
  `nonceforge-elixir`), with the repository's workspace settings and its
  Cargo.lock trimmed to them (`cargo update --workspace --offline`), so the
  package builds with `--locked` the versions this repository tests.
  """
  use Mix.Task

  @crates ~w(nonceforge nonceforge-lease nonceforge-elixir)
  # The test servers' lines: the workspace's dependency (and its comment) and
  # the lease crate's dev-dependency on it.
  @testkit_dep ~r/^(# Test servers[^\n]*\n)?nonceforge-testkit(\.workspace = true| = \{[^\n]*\})\n/m

  @impl true
  def run(_args) do
    root = Nonceforge.Build.root()

    unless Nonceforge.Build.checkout?(),
      do: Mix.raise("nonceforge.vendor: run it in a checkout of the repository")

    native = Nonceforge.Build.native_dir()
    File.rm_rf!(native)

    for crate <- @crates do
      File.mkdir_p!(Path.join(native, "crates/#{crate}"))

      for part <- ~w(Cargo.toml build.rs src benches tests),
          File.exists?(Path.join(root, "crates/#{crate}/#{part}")) do
        File.cp_r!(
          Path.join(root, "crates/#{crate}/#{part}"),
          Path.join(native, "crates/#{crate}/#{part}")
        )
      end

      # The test servers (nonceforge-testkit, a path dev-dependency) stay in
      # the repository: the package builds the NIF, never these tests.
      manifest = Path.join(native, "crates/#{crate}/Cargo.toml")
      File.write!(manifest, String.replace(File.read!(manifest), @testkit_dep, ""))
    end

    members = Enum.map_join(@crates, ", ", &~s("crates/#{&1}"))

    manifest =
      File.read!(Path.join(root, "Cargo.toml"))
      |> String.replace(~r/^members = \[.*\]$/m, "members = [#{members}]")
      |> String.replace(@testkit_dep, "")

    File.write!(Path.join(native, "Cargo.toml"), manifest)
    File.cp!(Path.join(root, "Cargo.lock"), Path.join(native, "Cargo.lock"))
    cargo = System.get_env("NONCEFORGE_CARGO", "cargo")

    case System.cmd(cargo, ~w(update --workspace --offline --quiet),
           cd: native,
           stderr_to_stdout: true
         ) do
      {_, 0} ->
        Mix.shell().info("nonceforge: vendored #{Enum.join(@crates, ", ")} into #{native}")

      {out, code} ->
        Mix.raise("nonceforge.vendor: cargo update exited with #{code}: #{out}")
    end
  end
end

defmodule Mix.Tasks.Nonceforge.Package do
  @shortdoc "Packs the package into a directory, as mix hex.build would"
  @moduledoc """
  `mix nonceforge.package OUT [--prebuilt]`: vendors the Rust sources
  (`mix nonceforge.vendor`), then copies exactly the files of the package's
  `package: [files: …]` into `OUT` — what `mix hex.build` would pack. With
  `--prebuilt`, builds the NIF for this platform and adds it under
  `priv/native/` with its sha256 in `checksums.txt`.
  """
  use Mix.Task

  @impl true
  def run(args) do
    {opts, [out]} = OptionParser.parse!(args, strict: [prebuilt: :boolean])
    Mix.Task.run("nonceforge.vendor")
    here = Path.expand(".", Path.dirname(Mix.Project.project_file()))
    File.rm_rf!(out)
    File.mkdir_p!(out)

    if opts[:prebuilt] do
      lib = Nonceforge.Build.cargo_build(Nonceforge.Build.root())
      dir = Path.join(out, "priv/native")
      File.mkdir_p!(dir)
      name = Nonceforge.Build.prebuilt_name()
      File.cp!(lib, Path.join(dir, name))
      sum = :crypto.hash(:sha256, File.read!(lib)) |> Base.encode16(case: :lower)
      File.write!(Path.join(dir, "checksums.txt"), "#{sum}  #{name}\n")
    end

    for entry <- Mix.Project.config()[:package][:files], File.exists?(Path.join(here, entry)) do
      File.mkdir_p!(Path.dirname(Path.join(out, entry)))
      File.cp_r!(Path.join(here, entry), Path.join(out, entry))
    end

    Mix.shell().info("nonceforge: package in #{out}")
  end
end
