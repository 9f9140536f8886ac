"""`python -m agent_cli`: the `memory` command, for a client that starts it by interpreter."""

from agent_cli.cli import main

if __name__ == "__main__":
    main(prog_name="memory")
