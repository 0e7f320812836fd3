"""The options the table formats' own libraries take to reach a location as the lab does: deltalake's
`storage_options` (object_store's keys) and pyiceberg's FileIO properties, from the same standard AWS
variables s3fs reads, so a Delta log or an Iceberg manifest is read with the credentials the lab lists with."""
from __future__ import annotations

import os

from .locations import scheme_of

_S3_SCHEMES = {"s3", "s3a", "s3n"}


def delta_storage_options(location: str) -> dict[str, str]:
    """deltalake's `storage_options` for `location`: none for a local path; for S3, the endpoint, region and
    identity of the environment, and plain HTTP allowed where the endpoint is (a local S3 server)."""
    if scheme_of(location) not in _S3_SCHEMES:
        return {}
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    options = {"AWS_REGION": os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"}
    for variable in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        if os.environ.get(variable):
            options[variable] = os.environ[variable]
    if endpoint:
        options["AWS_ENDPOINT_URL"] = endpoint
        options["AWS_ALLOW_HTTP"] = str(endpoint.startswith("http://")).lower()
    return options


def iceberg_file_io_properties(location: str) -> dict[str, str]:
    """pyiceberg's FileIO properties (`s3.endpoint`, `s3.access-key-id`, ...) for `location`, from the
    environment; none for a local path. A catalog's own properties, where it was given some, come first."""
    if scheme_of(location) not in _S3_SCHEMES:
        return {}
    properties = {"s3.region": os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"}
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        properties["s3.endpoint"] = endpoint
        properties["s3.force-virtual-addressing"] = "false"
    for variable, key in (("AWS_ACCESS_KEY_ID", "s3.access-key-id"), ("AWS_SECRET_ACCESS_KEY", "s3.secret-access-key"),
                          ("AWS_SESSION_TOKEN", "s3.session-token")):
        if os.environ.get(variable):
            properties[key] = os.environ[variable]
    return properties
