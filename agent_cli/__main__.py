from agent_cli.cli import main

main(prog_name="memory")
