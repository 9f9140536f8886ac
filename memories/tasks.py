from celery import shared_task

from memories.indexing import index_pending


@shared_task(ignore_result=True)
def index_facts() -> int:
    """Embed and index whatever is waiting; safe to run on many workers at once."""
    return index_pending()
