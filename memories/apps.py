from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "memories"
    verbose_name = "Memories"

    def ready(self) -> None:
        from django.conf import settings
        from django.db.backends.signals import connection_created
        from django.db.models.signals import post_migrate

        from memories.search import vector_params

        connection_created.connect(vector_params.on_connection_created,
                                   dispatch_uid="echo-vector-params")
        post_migrate.connect(vector_params.after_migrate, sender=self,
                             dispatch_uid="echo-vector-params-migrate")
        if settings.ECHO_MEMORY_INDEXING == "celery":
            # Registers the tasks the indexer sends a write's facts to (the indexer sits
            # below them: memories/search/task_senders.py).
            import memories.tasks  # noqa: F401
