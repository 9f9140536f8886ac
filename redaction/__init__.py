"""Secret redaction: rules, the regex-safety check and the redactor. Plain code below every
app (imports none of ours); accounts keep each account's settings."""
