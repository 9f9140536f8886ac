"""The `memory` command: coding agents' side of Echo Memory. It talks to the server over
HTTP only and never imports the engine."""
