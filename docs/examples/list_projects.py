"""List every project a ReportQL key can see, page by page, with Python's standard library only.

    REPORTQL_API_KEY=rql_... python3 list_projects.py

REPORTQL_URL is the server's GraphQL address (default http://localhost:4000/graphql);
REPORTQL_PAGE_SIZE the number of projects per request (default 50, at most 200).
"""
import json
import os
import sys
import urllib.error
import urllib.request

URL = os.environ.get("REPORTQL_URL", "http://localhost:4000/graphql")
PAGE_SIZE = int(os.environ.get("REPORTQL_PAGE_SIZE", "50"))


class GraphQLError(Exception):
    """The server's errors, each with its code (extensions.code), e.g. UNAUTHENTICATED."""

    def __init__(self, errors):
        self.errors = errors
        super().__init__("; ".join(f"{e.get('extensions', {}).get('code')}: {e.get('message')}" for e in errors))


def graphql(query, variables=None):
    """Sends one operation; returns its data, or raises GraphQLError with the server's errors."""
    body = json.dumps({"query": query, "variables": variables or {}}).encode("utf-8")
    request = urllib.request.Request(
        URL,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Authorization": "Bearer " + os.environ["REPORTQL_API_KEY"],
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            answer = json.load(response)
    except urllib.error.HTTPError as error:
        # A refused key (401), a rate limit (429, with Retry-After) or bad input (400) still
        # answers with GraphQL errors in the body.
        answer = json.load(error)
    if answer.get("errors"):
        raise GraphQLError(answer["errors"])
    return answer["data"]


PROJECTS = """
query Projects($first: Int, $after: String) {
  projects(first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes { id name useCases(first: 1) { totalCount } }
  }
}
"""


def all_projects():
    """Every project, following pageInfo.endCursor until hasNextPage is false."""
    after = None
    while True:
        page = graphql(PROJECTS, {"first": PAGE_SIZE, "after": after})["projects"]
        yield from page["nodes"]
        if not page["pageInfo"]["hasNextPage"]:
            return
        after = page["pageInfo"]["endCursor"]


def main():
    try:
        viewer = graphql("{ viewer { serverAdmin role } }")["viewer"]
        print(f"signed in: server admin {viewer['serverAdmin']}, role {viewer['role']}")
        count = 0
        for project in all_projects():
            count += 1
            print(f"{project['id']}\t{project['name']}\t{project['useCases']['totalCount']} use cases")
        print(f"{count} projects")
    except GraphQLError as error:
        print(f"ReportQL refused: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
