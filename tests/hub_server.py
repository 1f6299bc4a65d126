"""A local stand-in of the Hugging Face Hub for the tests: the HTTP calls huggingface_hub 2.4, datasets 5.2 and
evaluate 0.4.6 make, answered from memory.

Why hand-written: the Hub is not reachable from the tests, there is no maintained offline Hub server on PyPI,
and mocking the client libraries would test the mocks. The routes and response shapes follow what the installed
clients send and parse (``huggingface_hub.hf_api``, ``file_download``, ``_commit_api``, ``lfs``; ``datasets.load``;
``evaluate.utils.file_utils``):

- ``GET /api/whoami-v2``; ``POST /api/repos/create``; ``PUT /api/{type}s/{id}/settings`` (visibility);
  ``POST /api/validate-yaml``;
- ``GET /api/{type}s/{id}[/revision/{rev}]`` (repo info with ``siblings``), ``.../tree/{rev}[/{path}]``,
  ``POST .../paths-info/{rev}``, ``GET .../commits/{rev}``, ``GET .../refs``;
- ``POST .../preupload/{rev}`` (upload modes and remote oids), ``POST .../commit/{rev}`` (NDJSON);
- ``POST /{prefix}{id}.git/info/lfs/objects/batch`` (basic transfer), the upload ``PUT`` and the verify ``POST``;
- ``HEAD``/``GET /{prefix}{id}/resolve/{rev}/{path}`` with ``Range``; LFS files are redirected (302) to a second
  address, the "CDN" (same server, other port: another origin, as the Hub's CDN is), which serves them with ranges;
- pull requests: ``POST .../commit/main?create_pr=1`` commits to a new ``refs/pr/N`` (numbered with the
  discussions, from 1) and answers its ``pullRequestUrl`` (``.../discussions/N``); ``refs/pr/N`` resolves as a
  revision, ``main`` does not move;
- Hub Benchmarks: ``GET /api/models/{id}?expand=evalResults`` adds ``evalResults`` (the entries of the
  ``.eval_results/*.yaml`` files at ``main``, each ``{filename, data}``, or ``{filename, error}`` for a file that is
  not a list of entries with ``dataset.id``, ``dataset.task_id`` and ``value``), and
  ``GET /api/datasets/{id}/leaderboard`` ranks, for a dataset with an ``eval.yaml`` at ``main`` (else 404), the entries
  of every public model repo (``main``, and open pull requests with their number) whose ``dataset.id`` is that dataset
  and whose ``task_id`` is its ``eval.yaml``'s first task (the Benchmark's headline), or the one ``?task_id=`` names:
  highest value first, one entry per model (its best), as ``get_dataset_leaderboard`` parses them; models whose card
  declares a ``base_model`` only with ``?base_model=false`` (huggingface_hub's ``base_model_only=False``). The Hub's own
  choice of task and its validation of the files are not documented in detail; this is what these tests rely on.

Xet storage is not emulated: clients run with ``HF_HUB_DISABLE_XET=1`` and use the LFS protocol. The dataset
viewer (``datasets-server``) is not emulated either; ``datasets`` treats its absence as "no parquet export".

Every request is recorded in ``HubServer.requests`` (method, path) so tests can assert that an offline run made
none.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

TOKEN = "hf_complexir_test_token"
USER = "complexir-tester"
#: A namespace the test token may not write to (create_repo answers 403 there, as the Hub does).
FOREIGN_NAMESPACE = "someone-else"
PREFIXES = {"model": "", "dataset": "datasets/", "space": "spaces/"}
_TYPES_PLURAL = {"models": "model", "datasets": "dataset", "spaces": "space"}
#: Stored with LFS (and so served through the CDN redirect), as the Hub's default .gitattributes does.
LFS_SUFFIXES = (".parquet", ".arrow", ".bin", ".gz", ".zip", ".safetensors", ".pt")
LFS_MIN_SIZE = 10 * 1024 * 1024


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class StoredFile:
    data: bytes
    lfs: bool

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def oid(self) -> str:
        """What preupload reports as the remote oid: sha256 for LFS files, the git blob sha1 otherwise."""
        return self.sha256 if self.lfs else git_blob_sha1(self.data)

    def entry(self, path: str) -> dict:
        """The tree / paths-info shape of this file."""
        out = {"type": "file", "path": path, "size": len(self.data), "oid": git_blob_sha1(self.pointer())}
        if self.lfs:
            out["lfs"] = {"oid": self.sha256, "size": len(self.data), "pointerSize": len(self.pointer())}
        return out

    def pointer(self) -> bytes:
        if not self.lfs:
            return self.data
        return (f"version https://git-lfs.github.com/spec/v1\noid sha256:{self.sha256}\n"
                f"size {len(self.data)}\n").encode()


@dataclass
class Commit:
    sha: str
    title: str
    files: dict[str, StoredFile]
    date: str


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    private: bool
    sdk: str | None
    commits: list[Commit] = field(default_factory=list)  # oldest first; main is the last
    pull_requests: dict[int, Commit] = field(default_factory=dict)  # number -> the head of refs/pr/<number>

    def find(self, revision: str) -> Commit | None:
        revision = unquote(revision)
        if revision in ("main", "refs/heads/main"):
            return self.commits[-1]
        if match := re.fullmatch(r"refs/pr/(\d+)", revision):
            return self.pull_requests.get(int(match[1]))
        return next((c for c in [*self.commits, *self.pull_requests.values()] if c.sha == revision), None)


class HubState:
    """Repos, LFS objects and the request log, shared by the API server and the CDN server."""

    def __init__(self) -> None:
        self.repos: dict[tuple[str, str], Repo] = {}
        self.lfs_objects: dict[str, bytes] = {}
        self.requests: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self._counter = 0

    def new_commit(self, repo: Repo, title: str, files: dict[str, StoredFile], *, pull_request: bool = False) -> Commit:
        """A commit on ``main``, or (``pull_request``) the head of a new ``refs/pr/<n>`` branched from ``main``."""
        self._counter += 1
        parent = repo.commits[-1].sha if repo.commits else ""
        sha = hashlib.sha1(f"{repo.repo_id}\n{parent}\n{self._counter}\n{title}".encode()).hexdigest()
        commit = Commit(sha, title, files, time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()))
        if pull_request:
            repo.pull_requests[len(repo.pull_requests) + 1] = commit
        else:
            repo.commits.append(commit)
        return commit

    def create_repo(self, repo_type: str, repo_id: str, *, private: bool = False, sdk: str | None = None) -> Repo:
        repo = Repo(repo_type, repo_id, private, sdk)
        attributes = "".join(f"*{suffix} filter=lfs diff=lfs merge=lfs -text\n" for suffix in LFS_SUFFIXES)
        self.new_commit(repo, "initial commit", {".gitattributes": StoredFile(attributes.encode(), False)})
        self.repos[(repo_type, repo_id)] = repo
        return repo


def is_lfs(path: str, size: int) -> bool:
    return path.endswith(LFS_SUFFIXES) or size >= LFS_MIN_SIZE


def eval_config_of(commit: Commit) -> dict | None:
    """The ``eval.yaml`` of a dataset commit, when it has one that is a mapping with a list of ``tasks``."""
    stored = commit.files.get("eval.yaml")
    if stored is None:
        return None
    try:
        config = yaml.safe_load(stored.data)
    except yaml.YAMLError:
        return None
    ok = isinstance(config, dict) and isinstance(config.get("tasks"), list) and config["tasks"]
    return config if ok and all(isinstance(t, dict) and "id" in t for t in config["tasks"]) else None


def declares_base_model(commit: Commit) -> bool:
    """Whether a model commit's card declares a ``base_model`` (a fine-tune: left out of the default leaderboard)."""
    stored = commit.files.get("README.md")
    text = stored.data.decode("utf-8", "replace") if stored is not None else ""
    if not text.startswith("---"):
        return False
    try:
        meta = yaml.safe_load(text.split("---", 2)[1])
    except yaml.YAMLError:
        return False
    return isinstance(meta, dict) and bool(meta.get("base_model"))


def eval_results_of(commit: Commit) -> list[tuple[str, dict]]:
    """(filename, ``{"data": entry}`` or ``{"error": why}``) for each entry of the ``.eval_results/*.yaml`` files of a
    model commit."""
    out: list[tuple[str, dict]] = []
    for path in sorted(p for p in commit.files if p.startswith(".eval_results/") and p.endswith((".yaml", ".yml"))):
        try:
            entries = yaml.safe_load(commit.files[path].data)
        except yaml.YAMLError as error:
            out.append((path, {"error": f"invalid YAML: {error}"}))
            continue
        valid = isinstance(entries, list) and all(
            isinstance(e, dict) and isinstance(e.get("dataset"), dict) and {"id", "task_id"} <= set(e["dataset"])
            and isinstance(e.get("value"), (int, float)) for e in entries)
        if not valid:
            out.append((path, {"error": "expected a list of entries with dataset.id, dataset.task_id and value"}))
            continue
        out.extend((path, {"data": entry}) for entry in entries)
    return out


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "complexir-test-hub"
    hub: HubServer  # set on the subclass made per server

    def log_message(self, format: str, *args: object) -> None:  # `format`: the base class's name
        pass  # quiet: the request log is self.hub.state.requests

    # -- plumbing -----------------------------------------------------------------------------------------
    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
              content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, payload: object, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(payload).encode(), headers)

    def _error(self, status: int, code: str | None, message: str) -> None:
        headers = {"X-Error-Message": message}
        if code:
            headers["X-Error-Code"] = code
        self._json(status, {"error": message}, headers)

    def _authenticated(self) -> bool:
        return self.headers.get("Authorization", "") == f"Bearer {TOKEN}"

    def _visible_repo(self, repo_type: str, repo_id: str) -> Repo | None:
        """The repo if it exists and the caller may see it; else a RepoNotFound answer was sent."""
        repo = self.hub.state.repos.get((repo_type, repo_id))
        if repo is None or (repo.private and not self._authenticated()):
            self._error(401 if not self._authenticated() else 404, "RepoNotFound", "Repository not found")
            return None
        return repo

    def _commit(self, repo: Repo, revision: str) -> Commit | None:
        commit = repo.find(revision)
        if commit is None:
            self._error(404, "RevisionNotFound", f"Invalid rev id: {unquote(revision)}")
        return commit

    def _dispatch(self) -> None:
        url = urlsplit(self.path)
        self.hub.state.requests.append((self.command, url.path))
        query = parse_qs(url.query)
        try:
            with self.hub.state.lock if self.command in ("POST", "PUT") else _nullcontext():
                self._route(url.path, query)
        except BrokenPipeError:
            pass

    do_GET = do_HEAD = do_POST = do_PUT = _dispatch

    # -- routes -------------------------------------------------------------------------------------------
    def _route(self, path: str, query: dict[str, list[str]]) -> None:
        if self.server.server_address[1] == self.hub.cdn_port:
            return self._cdn(path)
        if path == "/api/whoami-v2":
            if not self._authenticated():
                return self._error(401, None, "Invalid credentials in Authorization header")
            return self._json(200, {"type": "user", "name": USER, "fullname": "complexir tests", "orgs": [],
                                    "auth": {"type": "access_token",
                                             "accessToken": {"displayName": "tests", "role": "write"}}})
        if path == "/api/repos/create" and self.command == "POST":
            return self._create_repo()
        if path == "/api/validate-yaml" and self.command == "POST":
            return self._validate_yaml()
        if path.startswith("/lfs-upload/") and self.command == "PUT":
            return self._lfs_upload(path.rsplit("/", 1)[1])
        if path == "/lfs-verify" and self.command == "POST":
            oid = json.loads(self._body())["oid"]
            return self._json(200 if oid in self.hub.state.lfs_objects else 404, {})
        if match := re.fullmatch(r"/api/(models|datasets|spaces)/([^/]+/[^/]+)(?:/(.*))?", path):
            return self._api(_TYPES_PLURAL[match[1]], unquote(match[2]), match[3] or "", query)
        if match := re.fullmatch(r"/(datasets/|spaces/)?([^/]+/[^/]+?)\.git/info/lfs/objects/batch", path):
            return self._lfs_batch()
        if match := re.fullmatch(r"/(datasets/|spaces/)?([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path):
            repo_type = {"datasets/": "dataset", "spaces/": "space"}.get(match[1] or "", "model")
            return self._resolve(repo_type, unquote(match[2]), match[3], unquote(match[4]))
        return self._error(404, None, f"no route for {self.command} {path}")

    def _create_repo(self) -> None:
        if not self._authenticated():
            return self._error(401, None, "Invalid credentials in Authorization header")
        payload = json.loads(self._body())
        repo_type = payload.get("type") or "model"
        repo_id = f"{payload.get('organization') or USER}/{payload['name']}"
        url = f"{self.hub.url}/{PREFIXES[repo_type]}{repo_id}"
        if repo_id.split("/")[0] == FOREIGN_NAMESPACE:
            return self._error(403, None, "You don't have the rights to create a repo under this namespace")
        if (repo_type, repo_id) in self.hub.state.repos:
            return self._json(409, {"error": "You already created this repo", "url": url})
        if repo_type == "space" and not payload.get("sdk"):
            return self._error(400, None, "a Space needs an sdk")
        private = payload.get("visibility", "public") == "private" or bool(payload.get("private"))
        self.hub.state.create_repo(repo_type, repo_id, private=private, sdk=payload.get("sdk"))
        return self._json(200, {"url": url, "name": repo_id, "id": repo_id})

    def _validate_yaml(self) -> None:
        content = json.loads(self._body()).get("content", "")
        if content.startswith("---"):
            try:
                yaml.safe_load(content.split("---", 2)[1])
            except yaml.YAMLError as error:
                return self._json(400, {"errors": [{"message": str(error)}], "warnings": []})
        return self._json(200, {"errors": [], "warnings": []})

    def _api(self, repo_type: str, repo_id: str, rest: str, query: dict[str, list[str]]) -> None:
        if rest == "settings" and self.command == "PUT":
            repo = self.hub.state.repos.get((repo_type, repo_id))
            if not self._authenticated():
                return self._error(401, None, "Invalid credentials in Authorization header")
            if repo is None:
                return self._error(404, "RepoNotFound", "Repository not found")
            payload = json.loads(self._body())
            if "visibility" in payload:
                repo.private = payload["visibility"] == "private"
            elif "private" in payload:
                repo.private = bool(payload["private"])
            return self._json(200, {})
        repo = self._visible_repo(repo_type, repo_id)
        if repo is None:
            return None
        head, _, tail = rest.partition("/")
        if rest == "" or head == "revision":
            commit = self._commit(repo, tail or "main")
            if commit is None:
                return None
            info = self._info(repo, commit)
            if "evalResults" in ",".join(query.get("expand", [])).split(","):
                info["evalResults"] = [{"filename": name, **found} for name, found in eval_results_of(commit)]
            return self._json(200, info)
        if rest == "leaderboard" and repo_type == "dataset":
            return self._leaderboard(repo, query.get("task_id", [None])[0],
                                     query.get("base_model", ["true"])[0].lower() != "false")
        if head == "tree":
            revision, _, folder = tail.partition("/")
            commit = self._commit(repo, revision)
            return commit and self._tree(commit, unquote(folder), query.get("recursive", ["False"])[0])
        if head == "paths-info" and self.command == "POST":
            commit = self._commit(repo, tail)
            if commit is None:
                return None
            form = parse_qs(self._body().decode())
            return self._json(200, [e for p in form.get("paths", []) for e in self._path_entry(commit, p)])
        if head == "commits":
            commit = self._commit(repo, tail or "main")
            if commit is None:
                return None
            history = repo.commits[: repo.commits.index(commit) + 1][::-1]
            return self._json(200, [{"id": c.sha, "title": c.title, "message": "", "date": c.date,
                                     "authors": [{"user": USER}]} for c in history])
        if head == "refs":
            return self._json(200, {"branches": [{"name": "main", "ref": "refs/heads/main",
                                                  "targetCommit": repo.commits[-1].sha}],
                                    "tags": [], "converts": []})
        if head == "preupload" and self.command == "POST":
            return self._preupload(repo)
        if head == "commit" and self.command == "POST":
            return self._commit_files(repo, tail, query)
        return self._error(404, None, f"no API route {rest!r}")

    def _leaderboard(self, dataset: Repo, task_id: str | None, base_models_only: bool) -> None:
        config = eval_config_of(dataset.commits[-1])
        if config is None:
            return self._error(404, None, f"{dataset.repo_id} has no eval.yaml: not a benchmark, no leaderboard")
        ids = [task["id"] for task in config["tasks"]]
        task_id = task_id or ids[0]
        if task_id not in ids:
            return self._error(404, None, f"{task_id!r} is not a task of {dataset.repo_id}'s eval.yaml")
        best: dict[str, dict] = {}  # model id -> its best entry for this task
        for repo in self.hub.state.repos.values():
            if repo.repo_type != "model" or repo.private:
                continue
            if base_models_only and declares_base_model(repo.commits[-1]):  # the Hub's default view: root models
                continue
            heads = [(None, repo.commits[-1]), *repo.pull_requests.items()]
            for number, commit in heads:
                for filename, found in eval_results_of(commit):
                    entry = found.get("data")
                    if entry is None or entry["dataset"]["id"] != dataset.repo_id:
                        continue
                    if entry["dataset"]["task_id"] != task_id:
                        continue
                    row = {"modelId": repo.repo_id, "value": entry["value"], "filename": filename,
                           "verified": False, "source": entry.get("source"), "notes": entry.get("notes"),
                           "pullRequest": number, "taskId": task_id,
                           "author": {"type": "user", "name": repo.repo_id.split("/")[0], "fullname": "",
                                      "avatarUrl": ""}}
                    if repo.repo_id not in best or row["value"] > best[repo.repo_id]["value"]:
                        best[repo.repo_id] = row
        ranked = sorted(best.values(), key=lambda r: -float(r["value"]))
        return self._json(200, [{"rank": i, **row} for i, row in enumerate(ranked, 1)])

    def _info(self, repo: Repo, commit: Commit) -> dict:
        siblings = []
        for path, stored in sorted(commit.files.items()):
            sibling = {"rfilename": path, "size": len(stored.data), "blobId": git_blob_sha1(stored.pointer())}
            if stored.lfs:
                sibling["lfs"] = {"size": len(stored.data), "sha256": stored.sha256,
                                  "pointerSize": len(stored.pointer())}
            siblings.append(sibling)
        info = {"_id": repo.repo_id, "id": repo.repo_id, "author": repo.repo_id.split("/")[0], "sha": commit.sha,
                "private": repo.private, "disabled": False, "gated": False, "downloads": 0, "likes": 0,
                "lastModified": commit.date, "createdAt": repo.commits[0].date, "tags": [],
                "siblings": siblings}
        if repo.repo_type == "space":
            info.update(sdk=repo.sdk, runtime={"stage": "RUNNING", "hardware": {"current": "cpu-basic"}})
        return info

    def _path_entry(self, commit: Commit, path: str) -> list[dict]:
        path = path.strip("/")
        if path in commit.files:
            return [commit.files[path].entry(path)]
        if any(p.startswith(path + "/") for p in commit.files):
            return [{"type": "directory", "path": path, "oid": hashlib.sha1(path.encode()).hexdigest()}]
        return []

    def _tree(self, commit: Commit, folder: str, recursive: str) -> None:
        folder = folder.strip("/")
        prefix = f"{folder}/" if folder else ""
        below = sorted(p for p in commit.files if p.startswith(prefix))
        if folder and not below:
            return self._error(404, "EntryNotFound", f"{folder} does not exist")
        deep = recursive.lower() in ("true", "1")
        entries: dict[str, dict] = {}
        for path in below:
            parts = path[len(prefix):].split("/")
            for depth in range(1, len(parts)):  # the folders on the way
                if depth > 1 and not deep:
                    break
                sub = prefix + "/".join(parts[:depth])
                entries.setdefault(sub, {"type": "directory", "path": sub,
                                         "oid": hashlib.sha1(sub.encode()).hexdigest()})
            if deep or len(parts) == 1:
                entries[path] = commit.files[path].entry(path)
        return self._json(200, [entries[k] for k in sorted(entries)])

    def _preupload(self, repo: Repo) -> None:
        if not self._authenticated():
            return self._error(401, None, "Invalid credentials in Authorization header")
        files = json.loads(self._body())["files"]
        current = repo.commits[-1].files
        answer = []
        for item in files:
            mode = "lfs" if is_lfs(item["path"], item["size"]) else "regular"
            stored = current.get(item["path"])
            answer.append({"path": item["path"], "uploadMode": mode, "shouldIgnore": False,
                           "oid": stored.oid if stored is not None and stored.lfs == (mode == "lfs") else None})
        return self._json(200, {"files": answer, "commitOid": repo.commits[-1].sha})

    def _commit_files(self, repo: Repo, revision: str, query: dict[str, list[str]]) -> None:
        if not self._authenticated():
            return self._error(401, None, "Invalid credentials in Authorization header")
        if unquote(revision) != "main":
            return self._error(400, None, "this test Hub commits to main only (and opens pull requests from it)")
        pull_request = query.get("create_pr", ["0"])[0] in ("1", "true", "True")
        lines = [json.loads(line) for line in self._body().splitlines() if line.strip()]
        files = dict(repo.commits[-1].files)
        title = "commit"
        for line in lines:
            key, value = line["key"], line["value"]
            if key == "header":
                title = value.get("summary") or title
            elif key == "file":
                files[value["path"]] = StoredFile(base64.b64decode(value["content"]), False)
            elif key == "lfsFile":
                data = self.hub.state.lfs_objects.get(value["oid"])
                if data is None:
                    return self._error(422, None, f"LFS object {value['oid']} was never uploaded")
                files[value["path"]] = StoredFile(data, True)
            elif key == "deletedFile":
                files.pop(value["path"], None)
            elif key == "deletedFolder":
                files = {p: f for p, f in files.items() if not p.startswith(value["path"].rstrip("/") + "/")}
            else:
                return self._error(400, None, f"unsupported commit operation {key}")
        commit = self.hub.state.new_commit(repo, title, files, pull_request=pull_request)
        where = f"{self.hub.url}/{PREFIXES[repo.repo_type]}{repo.repo_id}"
        pr_url = f"{where}/discussions/{len(repo.pull_requests)}" if pull_request else None
        return self._json(200, {"commitUrl": f"{where}/commit/{commit.sha}", "commitOid": commit.sha,
                                "pullRequestUrl": pr_url})

    def _lfs_batch(self) -> None:
        if not self._authenticated():
            return self._error(401, None, "Invalid credentials in Authorization header")
        payload = json.loads(self._body())
        objects = []
        for obj in payload["objects"]:
            entry = {"oid": obj["oid"], "size": obj["size"]}
            if obj["oid"] not in self.hub.state.lfs_objects:
                entry["actions"] = {"upload": {"href": f"{self.hub.url}/lfs-upload/{obj['oid']}"},
                                    "verify": {"href": f"{self.hub.url}/lfs-verify"}}
            objects.append(entry)
        self._send(200, json.dumps({"transfer": "basic", "objects": objects}).encode(),
                   content_type="application/vnd.git-lfs+json")

    def _lfs_upload(self, oid: str) -> None:
        data = self._body()
        if hashlib.sha256(data).hexdigest() != oid:
            return self._error(400, None, "sha256 mismatch")
        self.hub.state.lfs_objects[oid] = data
        return self._send(200)

    def _resolve(self, repo_type: str, repo_id: str, revision: str, path: str) -> None:
        repo = self._visible_repo(repo_type, repo_id)
        if repo is None:
            return None
        commit = self._commit(repo, revision)
        if commit is None:
            return None
        stored = commit.files.get(path)
        if stored is None:
            return self._error(404, "EntryNotFound", f"{path} does not exist on {revision}")
        headers = {"X-Repo-Commit": commit.sha, "Accept-Ranges": "bytes"}
        if stored.lfs:  # as the Hub does: a redirect to the CDN, the metadata on the redirect itself
            headers.update({"Location": f"{self.hub.cdn_url}/lfs/{stored.sha256}",
                            "X-Linked-Etag": f'"{stored.sha256}"', "X-Linked-Size": str(len(stored.data)),
                            "ETag": f'"{git_blob_sha1(stored.pointer())}"'})
            return self._send(302, b"", headers)
        headers["ETag"] = f'"{git_blob_sha1(stored.data)}"'
        return self._ranged(stored.data, headers)

    def _cdn(self, path: str) -> None:
        match = re.fullmatch(r"/lfs/([0-9a-f]{64})", path)
        data = self.hub.state.lfs_objects.get(match[1]) if match else None
        if data is None:
            return self._error(404, None, "no such object")
        return self._ranged(data, {"ETag": f'"{match[1]}"', "Accept-Ranges": "bytes"})

    def _ranged(self, data: bytes, headers: dict[str, str]) -> None:
        spec = self.headers.get("Range")
        if spec and (match := re.fullmatch(r"bytes=(\d*)-(\d*)", spec.strip())):
            start, end = match[1], match[2]
            if start == "":  # suffix range: the last N bytes
                first, last = max(0, len(data) - int(end)), len(data) - 1
            else:
                first, last = int(start), min(int(end) if end else len(data) - 1, len(data) - 1)
            if first >= len(data) or first > last:
                return self._send(416, b"", {"Content-Range": f"bytes */{len(data)}"})
            headers = {**headers, "Content-Range": f"bytes {first}-{last}/{len(data)}"}
            return self._send(206, data[first:last + 1], headers, "application/octet-stream")
        return self._send(200, data, headers, "application/octet-stream")


class _nullcontext:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


class HubServer:
    """The API server and its CDN on two ports of 127.0.0.1 (free ports chosen by the OS), in daemon threads."""

    def __init__(self) -> None:
        self.state = HubState()
        handler = type("Handler", (_Handler,), {"hub": self})
        self._api = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._cdn = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._api.daemon_threads = self._cdn.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._api.server_address[1]}"
        self.cdn_port = self._cdn.server_address[1]
        # another origin than the API (as the Hub's CDN is): clients must not send the token there
        self.cdn_url = f"http://localhost:{self.cdn_port}"
        self._threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in (self._api, self._cdn)]

    def start(self) -> HubServer:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        for server in (self._api, self._cdn):
            server.shutdown()
            server.server_close()

    # -- seeding, without going through HTTP (tests of the upload path use the real clients) ----------------
    def put_folder(self, repo_type: str, repo_id: str, folder: Path, *, private: bool = False,
                   skip: tuple[str, ...] = ()) -> str:
        """Create ``repo_id`` (if needed) and commit the files of ``folder`` to it, except those whose relative
        path starts with one of ``skip``; returns the commit sha."""
        with self.state.lock:
            repo = self.state.repos.get((repo_type, repo_id)) or self.state.create_repo(
                repo_type, repo_id, private=private, sdk="gradio" if repo_type == "space" else None)
            files = dict(repo.commits[-1].files)
            for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
                relative = path.relative_to(folder).as_posix()
                if relative.startswith(skip) if skip else False:
                    continue
                data = path.read_bytes()
                lfs = is_lfs(relative, len(data))
                if lfs:
                    self.state.lfs_objects[hashlib.sha256(data).hexdigest()] = data
                files[relative] = StoredFile(data, lfs)
            return self.state.new_commit(repo, f"add {Path(folder).name}", files).sha

    def files(self, repo_type: str, repo_id: str) -> dict[str, bytes]:
        """The files at the head of ``main``."""
        repo = self.state.repos[(repo_type, repo_id)]
        return {path: stored.data for path, stored in repo.commits[-1].files.items()}

    def repo(self, repo_type: str, repo_id: str) -> Repo | None:
        return self.state.repos.get((repo_type, repo_id))


# --------------------------------------------------------------------------------------------------------
# Clients: subprocesses pointed at the server
# --------------------------------------------------------------------------------------------------------

#: Run first in every client subprocess: any connection to a host other than the local server fails at once,
#: so a test cannot pass by reaching the real Hub (or hang on a DNS lookup for the dataset viewer).
NETWORK_GUARD = """
import socket as _socket
_getaddrinfo = _socket.getaddrinfo
def _local_only(host, *args, **kwargs):
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise OSError(f"test Hub: no network access to {host!r}")
    return _getaddrinfo(host, *args, **kwargs)
_socket.getaddrinfo = _local_only
"""


def client_env(server: HubServer, home: Path, *, offline: bool = False, token: bool = True,
               base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a client of ``server`` whose Hugging Face caches live under ``home``."""
    import os

    env = {k: v for k, v in (base if base is not None else os.environ).items()
           if not k.startswith(("HF_", "HUGGINGFACE_")) and k not in ("TRANSFORMERS_OFFLINE", "COMPLEXIR_DATA_DIR")}
    env.update({
        "HF_ENDPOINT": server.url,
        "HF_HOME": str(home),
        "HF_HUB_DISABLE_XET": "1",  # xet storage is not emulated; the LFS protocol is
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
        "HF_HUB_OFFLINE": "1" if offline else "0",
        "HF_EVALUATE_OFFLINE": "1" if offline else "0",
    })
    if token:
        env["HF_TOKEN"] = TOKEN
    return env


def run_client(code: str, env: dict[str, str], *, cwd: Path | None = None, timeout: float = 600):
    """Run ``code`` in a fresh Python with the network guard; returns the CompletedProcess (text)."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", NETWORK_GUARD + "\n" + code], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def run_cli(args: list[str], env: dict[str, str], *, cwd: Path | None = None, timeout: float = 600):
    """``complexir ARGS`` in a fresh Python with the network guard."""
    return run_client(f"import sys\nfrom complexir.cli.main import main\nsys.exit(main({args!r}))", env,
                      cwd=cwd, timeout=timeout)
