from django.conf import settings


def signup(request):
    return {"open_signup": settings.OPEN_SIGNUP}
