"""The long-form run of bench/portability.py (--second-box): account A's memories moved to
another box with the command line, as an operator would, and asked there.

Box 1 is the benchmark's own (account A loaded as ranking_cv records it). Each memory is
exported there with `echo-memory export MEMORY --vectors --account A -o FILE`; box 2 is a
new home (`echo-memory quickstart --no-serve`: its own data dir, embedded server and
account), where a memory of each name is made and `echo-memory import FILE --into MEMORY`
reads the file. Then a process on box 2 (`bench/portability.py --answer-on HOME2`) asks
every question through query_memory and writes each top 10 as box 1's fact ids (box 2's
import records map them back); the lists are compared with A's here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ECHO_MEMORY = str(Path(sys.executable).parent / "echo-memory")
MAKE_MEMORIES = ("import json, sys\n"
                 "from accounts.models import Account\n"
                 "from memories.graph.services import memory_create\n"
                 "for name in json.loads({names!r}):\n"
                 "    memory_create(account_id=Account.objects.get().pk, name=name)\n")


def _env(home: Path | str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL",
                        "CELERY_BROKER_URL", "SECRET_KEY")}
    env.update(ECHO_MEMORY_HOME=str(home), ECHO_MEMORY_INDEXING="manual",
               PYTHONPATH=str(ROOT))
    return env


def _run(args: list[str], env: dict[str, str], *, executable: str = ECHO_MEMORY) -> str:
    done = subprocess.run([executable, *args], env=env, capture_output=True, text=True,
                          timeout=3600)
    if done.returncode:
        sys.exit(f"{' '.join(args[:2])} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return done.stdout


def second_box(a_account, memories: list[str], questions, on_a, labels, recall10) -> None:
    """Move `memories` to a new box by the command line and compare its answers with A's."""
    from memories.portability.export import embedding_model

    box1 = _env(os.environ["ECHO_MEMORY_HOME"])
    home2 = Path(tempfile.mkdtemp(prefix="echo-bench-box2-"))
    box2 = _env(home2)
    folder = Path(tempfile.mkdtemp(prefix="echo-bench-files-"))
    try:
        _run(["quickstart", "--no-serve"], box2)
        _run(["manage", "shell", "-c", MAKE_MEMORIES.format(names=json.dumps(memories))], box2)
        said = []
        for memory in memories:
            path = folder / f"{memory}.jsonl"
            _run(["export", memory, "--vectors", "--account", str(a_account.pk), "-o",
                  str(path)], box1)
            said.append(f"$ echo-memory import {path.name} --into {memory}\n"
                        + _run(["import", str(path), "--into", memory], box2))
        again = _run(["import", str(folder / f"{memories[0]}.jsonl"), "--into", memories[0]],
                     box2)
        asked = folder / "questions.json"
        answered = folder / "answers.json"
        asked.write_text(json.dumps(questions))
        _run([str(Path(__file__).resolve().parent / "portability.py"), "--answer-on",
              str(home2), str(asked), str(answered)], box2, executable=sys.executable)
        on_2 = json.loads(answered.read_text())
    finally:
        subprocess.run([ECHO_MEMORY, "manage", "shell", "-c",
                        "from echomem import embedded_db; from pathlib import Path; "
                        f"embedded_db.stop(Path({str(home2)!r}))"],
                       env=box2, capture_output=True, timeout=120)
        shutil.rmtree(home2, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)
    same = sum(x == y for x, y in zip(on_a, on_2, strict=True))
    print(f"\nsecond box (echo-memory export --vectors on box 1, echo-memory import on box 2, "
          f"embedding model {embedding_model()}):")
    print("".join(said[:2]).rstrip())
    print(f"(and {len(said) - 2} more memories) second import of {memories[0]}:\n"
          + again.rstrip())
    print(f"box 2: identical top-10 lists {same}/{len(questions)}; recall@10 A "
          f"{recall10(on_a, questions, labels):.4f}, box 2 {recall10(on_2, questions, labels):.4f}")


def answer_on(home: str, questions_path: Path, out_path: Path, ask_all) -> None:
    """On box 2: every question's top 10, as box 1's fact ids."""
    from bench.setup import fresh_instance, use_cached_embedder

    fresh_instance(indexing="manual", keep=home)
    use_cached_embedder(queries_too=True)
    from accounts.operators import operator_principal
    from memories.import_records import ImportedRecord

    principal = operator_principal()
    back = {str(local): str(source) for local, source in ImportedRecord.objects.filter(
        memory__account_id=principal.account_id, kind="fact").values_list("local_id",
                                                                          "source_id")}
    questions = [tuple(q) for q in json.loads(questions_path.read_text())]
    out_path.write_text(json.dumps(ask_all(principal, questions, back)))
