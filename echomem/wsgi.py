import io
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "echomem.settings")


class ChunkedBodies:
    """Give a chunked request body the length Django reads bodies by.

    Django reads a request body only up to CONTENT_LENGTH; gunicorn passes a
    `Transfer-Encoding: chunked` body without one, so Django saw it as empty. The body
    is read here, at most one byte past the body limit, so an endless stream is not
    buffered: a body over the limit keeps a length over the limit, and every door
    answers it with 413 as it would a declared one.
    """

    def __init__(self, app, limit: int):
        self.app = app
        self.limit = limit

    def __call__(self, environ, start_response):
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if chunked and not environ.get("CONTENT_LENGTH"):
            body = environ["wsgi.input"].read(self.limit + 1)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        return self.app(environ, start_response)


def _application():
    from django.conf import settings

    django_app = get_wsgi_application()
    return ChunkedBodies(django_app, settings.MAX_BODY_BYTES)


application = _application()
