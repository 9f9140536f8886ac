"""What the graph's columns hold, declared once for the models and the argument schemas.

Argument schemas check text against these after normalization too (an entity's
normalized name can be longer than the name: 'ß' -> 'ss'), so nothing that passes
validation can overflow a column.
"""

from audit.limits import SESSION_ID_CHARS

NAME_CHARS = 500        # Entity.name and Entity.normalized_name
TYPE_CHARS = 100        # Entity.type
RELATION_CHARS = 200    # Fact.relation_type
LABEL_CHARS = SESSION_ID_CHARS  # session_id (stored in the audit chain too), project
FACT_CHARS = 4000       # a fact is a sentence; the column is text, the limit is ours
INITIALS_CHARS = 100    # Entity.initials (memories/core/names.py keeps it far shorter)
NOTE_TITLE_CHARS = 60        # Note.title (EchoVault: "max 60 chars")
