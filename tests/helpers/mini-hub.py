# mini-hub.py ROOT PORT_FIFO LOG - a small Hugging Face Hub of our own on
# 127.0.0.1 for tests/cli/hub.sh: ROOT/<org>/<name>/ are the repositories.
#   GET /api/models/<org>/<name>/revision/<rev>   model info: sha, siblings
#   GET /<org>/<name>/resolve/<rev>/<path>        the file (Range: bytes=a-b);
#       a .safetensors answers 302 to /cdn/<org>/<name>/<path> (as the Hub's
#       large files do)
# A repository's name chooses its behaviour:
#   gated-*      401 on resolve without "Authorization: Bearer good-token"
#   slow-*       resolve never answers (until the server stops)
#   truncated-*  a range reply that announces more bytes than it sends
#   ratelimit-*  429 with Retry-After: 17
#   norange-*    ignores Range: the whole file, 200
# The port is written to PORT_FIFO once listening (the test blocks reading
# it: no polling); each request is appended to LOG as one line:
#   <method> <path> range=<Range or -> auth=<yes|no>
import hashlib
import http.server
import json
import os
import re
import sys
import threading

ROOT, FIFO, LOG = sys.argv[1], sys.argv[2], sys.argv[3]
stop = threading.Event()
log_lock = threading.Lock()


def commit_of(repo):
    return hashlib.sha1(repo.encode()).hexdigest()


def files_of(d):
    out = []
    for base, _, names in os.walk(d):
        for n in names:
            out.append(os.path.relpath(os.path.join(base, n), d))
    return sorted(out)


class Hub(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *a):
        pass

    def note(self):
        with log_lock, open(LOG, 'a') as f:
            f.write('%s %s range=%s auth=%s\n' % (
                self.command, self.path, self.headers.get('Range', '-'),
                'yes' if self.headers.get('Authorization') else 'no'))

    def reply(self, code, body=b'', headers=()):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def error(self, code, what, extra=()):
        self.reply(code, json.dumps({'error': what}).encode(),
                   [('X-Error-Code', what), ('Content-Type', 'application/json')] + list(extra))

    def repo_dir(self, org, name):
        d = os.path.join(ROOT, org, name)
        return d if os.path.isdir(d) else None

    def do_GET(self):
        self.note()
        m = re.match(r'^/api/models/([^/]+)/([^/]+)/revision/([^/]+)$', self.path)
        if m:
            return self.model_info(*m.groups())
        m = re.match(r'^/([^/]+)/([^/]+)/resolve/([^/]+)/(.+)$', self.path)
        if m:
            return self.resolve(*m.groups())
        m = re.match(r'^/cdn/([^/]+)/([^/]+)/(.+)$', self.path)
        if m:
            d = self.repo_dir(m.group(1), m.group(2))
            return self.serve(d, m.group(3), m.group(2)) if d else self.error(404, 'RepoNotFound')
        self.error(404, 'NotFound')

    def model_info(self, org, name, rev):
        repo = org + '/' + name
        d = self.repo_dir(org, name)
        if not d:
            return self.error(404, 'RepoNotFound')
        if name.startswith('ratelimit-'):
            return self.error(429, 'RateLimited', [('Retry-After', '17')])
        sha = commit_of(repo)
        if rev not in ('main', sha):
            return self.error(404, 'RevisionNotFound')
        body = json.dumps({'id': repo, 'sha': sha,
                           'siblings': [{'rfilename': f} for f in files_of(d)]}).encode()
        self.reply(200, body, [('Content-Type', 'application/json')])

    def resolve(self, org, name, rev, path):
        repo = org + '/' + name
        d = self.repo_dir(org, name)
        if not d:
            return self.error(404, 'RepoNotFound')
        if rev not in ('main', commit_of(repo)):
            return self.error(404, 'RevisionNotFound')
        if name.startswith('gated-') and \
                self.headers.get('Authorization') != 'Bearer good-token':
            return self.error(401, 'GatedRepo')
        if name.startswith('slow-'):
            stop.wait(120)
            return
        if not os.path.isfile(os.path.join(d, path)):
            return self.error(404, 'EntryNotFound')
        if path.endswith('.safetensors'):
            return self.reply(302, b'', [('Location', '/cdn/%s/%s/%s' % (org, name, path)),
                                         ('X-Repo-Commit', commit_of(repo))])
        self.serve(d, path, name)

    def serve(self, d, path, name):
        p = os.path.join(d, path)
        if not os.path.isfile(p):
            return self.error(404, 'EntryNotFound')
        with open(p, 'rb') as f:
            data = f.read()
        rng = self.headers.get('Range')
        m = re.match(r'^bytes=(\d+)-(\d+)$', rng or '')
        if not m or name.startswith('norange-'):
            return self.reply(200, data)
        a, b = int(m.group(1)), min(int(m.group(2)), len(data) - 1)
        if a > b:
            return self.reply(416, b'', [('Content-Range', 'bytes */%d' % len(data))])
        part = data[a:b + 1]
        self.send_response(206)
        self.send_header('Content-Range', 'bytes %d-%d/%d' % (a, b, len(data)))
        self.send_header('Content-Length', str(len(part)))
        if name.startswith('truncated-') and a > 0:
            self.send_header('Connection', 'close')
            self.end_headers()
            self.wfile.write(part[:len(part) // 2])
            self.close_connection = True
            return
        self.end_headers()
        self.wfile.write(part)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that gave up (the timeout case) is expected


srv = Server(('127.0.0.1', 0), Hub)
with open(FIFO, 'w') as f:
    f.write('%d\n' % srv.server_address[1])
try:
    srv.serve_forever()
finally:
    stop.set()
