"""A minimal W3C WebDriver client (plain HTTP and JSON to chromedriver, through urllib), for the
web console's browser tests (test_web.py) and its benchmark (bench/web).

Browser() starts chromedriver on a free loopback port and a headless Chromium session that
accepts the controller's self-signed certificate; quit() ends both (and removes the profile).
Only what the tests use: navigate, find elements by CSS, click, type, read text and attributes,
run a script, wait, screenshot.
"""
import base64
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

# The W3C name of an element reference in JSON.
ELEMENT = 'element-6066-11e4-a52e-4f735466cecf'


def find_chromium():
    """(chromium, chromedriver) paths, or None where either is missing."""
    browser = shutil.which('chromium') or shutil.which('chromium-browser')
    driver = shutil.which('chromedriver')
    if browser is None or driver is None:
        return None
    return browser, driver


def missing_reason():
    return 'needs chromium and chromium-driver (scripts/setup installs them)'


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def processes_naming(text):
    """Pids of the processes whose command line contains `text`."""
    out = []
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open(f'/proc/{d}/cmdline', 'rb') as f:
                if text.encode() in f.read():
                    out.append(int(d))
        except OSError:
            pass
    return out


class WebDriverError(Exception):
    pass


class Element:
    def __init__(self, browser, ref):
        self.b = browser
        self.ref = ref

    def _call(self, method, what, body=None):
        return self.b.call(method, f'/element/{self.ref}/{what}', body)

    def click(self):
        self._call('POST', 'click', {})

    def type(self, text):
        self._call('POST', 'value', {'text': text})

    def clear(self):
        self._call('POST', 'clear', {})

    @property
    def text(self):
        return self._call('GET', 'text')

    def attribute(self, name):
        return self._call('GET', f'attribute/{name}')

    def property(self, name):
        return self._call('GET', f'property/{name}')

    def find(self, css):
        r = self.b.call('POST', f'/element/{self.ref}/element',
                        {'using': 'css selector', 'value': css})
        return Element(self.b, r[ELEMENT])

    def find_all(self, css):
        r = self.b.call('POST', f'/element/{self.ref}/elements',
                        {'using': 'css selector', 'value': css})
        return [Element(self.b, e[ELEMENT]) for e in r]


class Browser:
    def __init__(self, width=1280, height=900):
        found = find_chromium()
        if found is None:
            raise WebDriverError(missing_reason())
        chromium, driver = found
        self.profile = tempfile.mkdtemp(prefix='berth-chromium-')
        self.port = free_port()
        self.log = open(os.path.join(self.profile, 'chromedriver.log'), 'ab')
        self.driver = subprocess.Popen(
            [driver, f'--port={self.port}', '--allowed-ips=127.0.0.1'],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.base = f'http://127.0.0.1:{self.port}'
        self.session = None
        try:
            self._wait_ready()
            caps = {'capabilities': {'alwaysMatch': {
                'browserName': 'chrome',
                'acceptInsecureCerts': True,
                'goog:chromeOptions': {
                    'binary': chromium,
                    'args': ['--headless=new', '--no-sandbox', '--disable-gpu',
                             '--disable-dev-shm-usage', '--disable-background-networking',
                             '--disable-component-update', '--disable-sync', '--no-first-run',
                             '--disable-extensions', f'--window-size={width},{height}',
                             f'--user-data-dir={self.profile}/data'],
                },
            }}}
            r = self._request('POST', '/session', caps, timeout=120)
            self.session = r['sessionId']
        except Exception:
            self.quit()
            raise

    def _wait_ready(self):
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                r = self._request('GET', '/status', timeout=2)
                if r.get('ready'):
                    return
            except (OSError, WebDriverError):
                pass
            if self.driver.poll() is not None:
                raise WebDriverError('chromedriver exited')
            time.sleep(0.1)
        raise WebDriverError('chromedriver did not start')

    def _request(self, method, path, body=None, timeout=60):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={'Content-Type': 'application/json'})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                reply = json.loads(r.read().decode() or '{}')
        except urllib.error.HTTPError as e:
            try:
                reply = json.loads(e.read().decode())
            except ValueError:
                raise WebDriverError(f'{method} {path}: HTTP {e.code}') from None
            v = reply.get('value', {})
            raise WebDriverError(f"{method} {path}: {v.get('error')}: {v.get('message')}") from None
        return reply.get('value', reply) if path != '/session' else reply.get('value', reply)

    def call(self, method, path, body=None, timeout=60):
        if method == 'POST' and body is None:
            body = {}
        return self._request(method, f'/session/{self.session}{path}', body, timeout)

    def get(self, url):
        self.call('POST', '/url', {'url': url})

    @property
    def url(self):
        return self.call('GET', '/url')

    def refresh(self):
        self.call('POST', '/refresh', {})

    def execute(self, script, *args, timeout=60):
        return self.call('POST', '/execute/sync', {'script': script, 'args': list(args)},
                         timeout=timeout)

    def execute_async(self, script, *args, timeout=60):
        return self.call('POST', '/execute/async', {'script': script, 'args': list(args)},
                         timeout=timeout)

    def find(self, css):
        r = self.call('POST', '/element', {'using': 'css selector', 'value': css})
        return Element(self, r[ELEMENT])

    def find_all(self, css):
        r = self.call('POST', '/elements', {'using': 'css selector', 'value': css})
        return [Element(self, e[ELEMENT]) for e in r]

    def wait(self, cond, what, timeout=30):
        """Polls cond() (WebDriver errors count as not yet) until it returns something true."""
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            try:
                v = cond()
                if v:
                    return v
            except WebDriverError as e:
                last = e
            time.sleep(0.1)
        raise AssertionError(f'timed out waiting for {what} (last error: {last})')

    def wait_find(self, css, timeout=30):
        return self.wait(lambda: self.find(css), f'an element {css}', timeout)

    def text_of(self, css):
        return self.execute(
            'const e = document.querySelector(arguments[0]); return e ? e.textContent : null;', css)

    def screenshot(self, path):
        png = base64.b64decode(self.call('GET', '/screenshot'))
        with open(path, 'wb') as f:
            f.write(png)

    def set_size(self, width, height):
        self.call('POST', '/window/rect', {'width': width, 'height': height})

    def quit(self):
        if self.session:
            try:
                self._request('DELETE', f'/session/{self.session}', timeout=30)
            except (OSError, WebDriverError):
                pass
            self.session = None
        if self.driver.poll() is None:
            self.driver.terminate()
            try:
                self.driver.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.driver.kill()
                self.driver.wait(timeout=10)
        # Chromium's processes name the profile: any left (a driver that died) are ours to end.
        for pid in processes_naming(self.profile):
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)
