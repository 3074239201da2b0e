[inputs: ["{mix,.formatter}.exs", "{lib,test}/**/*.{ex,exs}", "../bench/elixir/*.exs"]]
