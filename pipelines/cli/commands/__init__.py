"""One module per `gpuledger` command: `add_parser(sub)` declares it, `run(args)` runs it."""
