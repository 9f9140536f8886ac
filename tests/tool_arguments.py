"""Arguments that make each tool's call valid, for the suites that call every tool (the
redaction corpus, the query-count pins): one table, so a new tool is added once."""

from __future__ import annotations

import copy
from typing import Any


def base_arguments(ids: dict[str, str]) -> dict[str, dict[str, Any]]:
    """What each tool needs to be valid (and, with real ids, to find what it names); the
    walk adds every optional text field these leave out."""
    return {
        "write_episode": {
            "scope": "shared", "session_id": "run-7", "project": "ops",
            "entities": [{"name": "Vault", "type": "service"},
                         {"name": "Billing", "type": "team"}],
            "facts": [{"source": "Vault", "target": "Billing", "relation_type": "serves",
                       "fact": "Vault serves the billing team its credentials",
                       "confidence": "extracted", "causal_hint": "led_to"}],
            "entity_resolutions": {"Vault": "new", "Billing": "new"}},
        "query_memory": {"scope": "shared", "query": "what serves the billing team"},
        "trace_cause": {"scope": "shared", "subject": "Vault"},
        "get_episode": {"scope": "shared", "episode_id": ids["episode_id"]},
        "record_recall_save": {"scope": "shared", "fact_id": ids["fact_id"],
                               "note": "It saved explaining the vault again",
                               "session_id": "run-7"},
        "get_audit_log": {"scope": "shared"},
        "get_usage": {},
        "memory_save": {"title": "Vault credentials", "what": "Billing reads them from Vault",
                        "why": "One place to rotate", "impact": "No keys in the repo",
                        "tags": ["vault"], "related_files": ["ops/vault.tf"],
                        "details": "Options considered: env files, Vault.",
                        "category": "decision", "project": "ops"},
        "memory_search": {"query": "where do credentials live", "project": "ops"},
        "memory_context": {"project": "ops"},
        "memory_details": {"id": ids["note_id"][:8], "project": "ops"},
        "forget": {"scope": "shared", "notes": [ids["note_id"][:8]]},
    }


def renamed(arguments: dict, suffix: str) -> dict:
    """write_episode's arguments with new entity names: new nodes, the same amount of work."""
    changed = copy.deepcopy(arguments)
    names = {entity["name"]: f"{entity['name']} {suffix}" for entity in changed["entities"]}
    for entity in changed["entities"]:
        entity["name"] = names[entity["name"]]
    for fact in changed["facts"]:
        fact["source"], fact["target"] = names[fact["source"]], names[fact["target"]]
    changed["entity_resolutions"] = {names[name]: choice
                                     for name, choice in changed["entity_resolutions"].items()}
    return changed
