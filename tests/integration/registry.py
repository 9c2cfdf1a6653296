"""A real OCI registry on loopback for the image tests, and images built from this machine's files.

Registry() starts Debian's `docker-registry` (distribution 2.8) on 127.0.0.1:<free port> with TLS
from a CA made here with openssl (its certificate has IP SAN 127.0.0.1), optionally with htpasswd
(bcrypt) auth, its storage in a temporary folder; stop() ends it and removes everything.

build_image() writes an OCI layout in pure Python: a layer with /bin/busybox (busybox-static) and
the applet symlinks asked for, a layer of marker files, and any extra raw layers (for the
malicious ones: escape_layer(), symlink_layer()). push() copies a layout into the registry with
skopeo. Nothing here reaches beyond loopback.
"""
import base64
import gzip
import hashlib
import io
import json
import os
import shutil
import socket
import ssl
import subprocess
import tarfile
import tempfile
import time
import urllib.request
import warnings

BUSYBOX = '/bin/busybox'
MTIME = 1700000000


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def bcrypt_hash(password):
    """A bcrypt hash for htpasswd: libcrypt's through Python's crypt (Debian 12's Python 3.11),
    else apache2-utils' `htpasswd -B` where Python has no crypt module (3.13 and later)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', DeprecationWarning)
            import crypt as c
        h = c.crypt(password, c.mksalt(c.METHOD_BLOWFISH, rounds=16))  # cost 4: fast tests
        if h and h.startswith('$2'):
            return h
    except ImportError:
        pass
    r = subprocess.run(['htpasswd', '-nbBC', '4', 'u', password], capture_output=True, text=True,
                       check=True)
    return r.stdout.strip().split(':', 1)[1]


class Registry:
    def __init__(self, auth=None):
        """auth: (user, password) to require htpasswd authentication."""
        self.auth = auth
        self.dir = tempfile.mkdtemp(prefix='berth-registry-')
        self.port = free_port()
        self.host = '127.0.0.1:%d' % self.port
        self.certs = os.path.join(self.dir, 'certs')  # ca.crt, for skopeo's --*-cert-dir
        self.storage = os.path.join(self.dir, 'data')
        self.log_path = os.path.join(self.dir, 'registry.log')
        self.proc = None
        self._log = None

    def _openssl(self, *args):
        subprocess.run(['openssl', *args], check=True, capture_output=True, cwd=self.dir)

    def _make_tls(self):
        os.makedirs(self.certs)
        self._openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2',
                      '-keyout', 'ca.key', '-out', os.path.join(self.certs, 'ca.crt'),
                      '-subj', '/CN=berth test registry CA')
        self._openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key',
                      '-out', 'server.csr', '-subj', '/CN=127.0.0.1')
        with open(os.path.join(self.dir, 'san.ext'), 'w') as f:
            f.write('subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n')
        self._openssl('x509', '-req', '-in', 'server.csr', '-CA', os.path.join(self.certs, 'ca.crt'),
                      '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-out', 'server.crt',
                      '-extfile', 'san.ext')

    def start(self):
        self._make_tls()
        cfg = [
            'version: 0.1',
            'log:',
            '  level: info',
            '  accesslog:',
            '    disabled: false',
            'storage:',
            '  filesystem:',
            '    rootdirectory: %s' % self.storage,
            '  delete:',
            '    enabled: true',
            'http:',
            '  addr: %s' % self.host,
            '  secret: berth-test',
            '  tls:',
            '    certificate: %s' % os.path.join(self.dir, 'server.crt'),
            '    key: %s' % os.path.join(self.dir, 'server.key'),
        ]
        if self.auth:
            with open(os.path.join(self.dir, 'htpasswd'), 'w') as f:
                f.write('%s:%s\n' % (self.auth[0], bcrypt_hash(self.auth[1])))
            cfg += ['auth:', '  htpasswd:', '    realm: berth-test',
                    '    path: %s' % os.path.join(self.dir, 'htpasswd')]
        config = os.path.join(self.dir, 'config.yml')
        with open(config, 'w') as f:
            f.write('\n'.join(cfg) + '\n')
        self._log = open(self.log_path, 'ab')
        self.proc = subprocess.Popen(['docker-registry', 'serve', config],
                                     stdout=self._log, stderr=subprocess.STDOUT)
        ctx = ssl.create_default_context(cafile=os.path.join(self.certs, 'ca.crt'))
        deadline = time.time() + 30
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError('docker-registry exited: ' + self.log_text()[-2000:])
            try:
                urllib.request.urlopen('https://%s/v2/' % self.host, context=ctx, timeout=2)
                break
            except urllib.error.HTTPError as e:
                if e.code == 401:
                    break
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError('docker-registry did not answer: ' + self.log_text()[-2000:])
            time.sleep(0.1)
        return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._log:
            self._log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def log_text(self):
        with open(self.log_path, 'rb') as f:
            return f.read().decode('utf-8', 'replace')

    def blob_gets(self, repository):
        """How many blob downloads (GET .../blobs/sha256:..., answered 200) the log shows."""
        needle = '"GET /v2/%s/blobs/sha256:' % repository
        return sum(1 for line in self.log_text().splitlines()
                   if needle in line and '" 200 ' in line)

    def authfile(self, path, user=None, password=None):
        """A Docker config.json with this registry's credentials (the given ones, or auth's)."""
        user = user or self.auth[0]
        password = password or self.auth[1]
        token = base64.b64encode(('%s:%s' % (user, password)).encode()).decode()
        with open(path, 'w') as f:
            json.dump({'auths': {self.host: {'auth': token}}}, f)
        return path

    def blob_path(self, digest):
        hexd = digest.split(':', 1)[1]
        return os.path.join(self.storage, 'docker/registry/v2/blobs/sha256', hexd[:2], hexd, 'data')

    def corrupt_blob(self, digest):
        """Flips a byte of a stored blob (same size); returns the original bytes."""
        path = self.blob_path(digest)
        with open(path, 'rb') as f:
            data = f.read()
        bad = bytearray(data)
        bad[len(bad) // 2] ^= 0xff
        with open(path, 'wb') as f:
            f.write(bytes(bad))
        return data

    def restore_blob(self, digest, data):
        with open(self.blob_path(digest), 'wb') as f:
            f.write(data)

    def push(self, layout, ref, tag='latest'):
        """Copies the layout's `tag` to 127.0.0.1:PORT/<ref> ("name:tag")."""
        cmd = ['skopeo', '--insecure-policy', 'copy', '--quiet', '--dest-cert-dir', self.certs]
        if self.auth:
            cmd += ['--dest-creds', '%s:%s' % self.auth]
        cmd += ['oci:%s:%s' % (layout, tag), 'docker://%s/%s' % (self.host, ref)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError('skopeo copy failed: ' + r.stderr)


# --- images -------------------------------------------------------------------------------------

def _tar(entries):
    """A tar's bytes from entries (name, kind, data): kind 'file' (bytes), 'dir', 'symlink'
    (target), 'hardlink' (target)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode='w', format=tarfile.PAX_FORMAT) as t:
        for name, kind, data in entries:
            info = tarfile.TarInfo(name)
            info.mtime = MTIME
            info.uid = info.gid = 0
            info.uname = info.gname = ''
            if kind == 'file':
                info.size = len(data)
                info.mode = 0o755 if name.startswith('bin/') else 0o644
                t.addfile(info, io.BytesIO(data))
            elif kind == 'dir':
                info.type = tarfile.DIRTYPE
                info.mode = data if isinstance(data, int) else 0o755
                t.addfile(info)
            elif kind == 'symlink':
                info.type = tarfile.SYMTYPE
                info.linkname = data
                info.mode = 0o777
                t.addfile(info)
            elif kind == 'hardlink':
                info.type = tarfile.LNKTYPE
                info.linkname = data
                t.addfile(info)
    return buf.getvalue()


def busybox_layer(applets=('sh', 'cat', 'ls', 'echo', 'sleep', 'id', 'env')):
    with open(BUSYBOX, 'rb') as f:
        bb = f.read()
    entries = [('bin', 'dir', None), ('bin/busybox', 'file', bb)]
    entries += [('bin/' + a, 'symlink', 'busybox') for a in applets]
    entries += [('tmp', 'dir', None), ('etc', 'dir', None)]
    return _tar(entries)


def files_layer(files):
    """files: {path: bytes | ('symlink', target) | ('dir', mode)}."""
    entries = []
    for path, v in sorted(files.items()):
        path = path.lstrip('/')
        if isinstance(v, tuple):
            entries.append((path, v[0], v[1]))
        else:
            entries.append((path, 'file', v if isinstance(v, bytes) else v.encode()))
    return _tar(entries)


def escape_layer(target_name='berth-escape-sentinel', depth=12):
    """A layer whose entry climbs out of the root ('../../...')."""
    return _tar([('../' * depth + 'tmp/' + target_name, 'file', b'escaped\n')])


def symlink_layer(outside_dir):
    """A layer that makes a symlink to `outside_dir`, then a file through it."""
    return _tar([('l', 'symlink', outside_dir), ('l/berth-through-symlink', 'file', b'evil\n')])


def build_image(dir, files=None, entrypoint=None, cmd=None, env=None, workdir='',
                extra_layers=(), tag='latest', with_busybox=True):
    """Writes an OCI layout at `dir`; returns {'manifest': digest, 'layers': [digests]}.
    Layers, bottom first: busybox (when with_busybox), the marker `files` (when given), then
    `extra_layers` (raw tar bytes)."""
    blobs = os.path.join(dir, 'blobs', 'sha256')
    os.makedirs(blobs, exist_ok=True)

    def put(data):
        d = 'sha256:' + hashlib.sha256(data).hexdigest()
        with open(os.path.join(blobs, d[7:]), 'wb') as f:
            f.write(data)
        return d

    tars = []
    if with_busybox:
        tars.append(busybox_layer())
    if files:
        tars.append(files_layer(files))
    tars += list(extra_layers)
    layers, diff_ids = [], []
    for t in tars:
        gz = gzip.compress(t, mtime=0)
        layers.append({'mediaType': 'application/vnd.oci.image.layer.v1.tar+gzip',
                       'digest': put(gz), 'size': len(gz)})
        diff_ids.append('sha256:' + hashlib.sha256(t).hexdigest())
    config = {'architecture': 'amd64', 'os': 'linux',
              'config': {'Env': env or ['PATH=/bin'], 'WorkingDir': workdir},
              'rootfs': {'type': 'layers', 'diff_ids': diff_ids}}
    if entrypoint is not None:
        config['config']['Entrypoint'] = entrypoint
    if cmd is not None:
        config['config']['Cmd'] = cmd
    cbytes = json.dumps(config).encode()
    manifest = {'schemaVersion': 2, 'mediaType': 'application/vnd.oci.image.manifest.v1+json',
                'config': {'mediaType': 'application/vnd.oci.image.config.v1+json',
                           'digest': put(cbytes), 'size': len(cbytes)},
                'layers': layers}
    mbytes = json.dumps(manifest).encode()
    mdigest = put(mbytes)
    with open(os.path.join(dir, 'oci-layout'), 'w') as f:
        json.dump({'imageLayoutVersion': '1.0.0'}, f)
    index_path = os.path.join(dir, 'index.json')
    index = {'schemaVersion': 2, 'manifests': []}
    if os.path.exists(index_path):
        with open(index_path) as f:
            index = json.load(f)
    index['manifests'] = [m for m in index['manifests']
                          if m.get('annotations', {}).get('org.opencontainers.image.ref.name')
                          != tag]
    index['manifests'].append({'mediaType': 'application/vnd.oci.image.manifest.v1+json',
                               'digest': mdigest, 'size': len(mbytes),
                               'annotations': {'org.opencontainers.image.ref.name': tag}})
    with open(index_path, 'w') as f:
        json.dump(index, f)
    return {'manifest': mdigest, 'layers': [l['digest'] for l in layers],
            'config': manifest['config']['digest']}


def archive(layout, path):
    """An OCI archive: a tar of the layout folder's content."""
    with tarfile.open(path, 'w') as t:
        for name in ('oci-layout', 'index.json', 'blobs'):
            t.add(os.path.join(layout, name), arcname=name)
    return path
