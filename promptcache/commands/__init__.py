"""One module per ``promptcache`` subcommand (registered in :mod:`promptcache.cli`)."""
