"""How a page lays out at a given window width, measured in headless Chromium:
what is wider than the window (the page itself, or a table, figure or code
block wider than the box it sits in), so a reader would scroll sideways."""

import html
import re
import shutil
import subprocess

BROWSERS = ("chromium", "chromium-browser", "google-chrome")

# Run after the page has laid out; the findings go into an element of the DOM,
# which Chromium's --dump-dom prints.
PROBE = """<script>
window.addEventListener('load', () => {
  const w = window.innerWidth, found = [];
  if (document.documentElement.scrollWidth > w) found.push('the page: ' + document.documentElement.scrollWidth + ' px');
  document.querySelectorAll('table, pre, img, svg').forEach(t => {
    const right = t.getBoundingClientRect().right, box = t.parentElement.clientWidth;
    if (right > w + 1 || t.scrollWidth > box + 1) {
      found.push(t.tagName.toLowerCase() + ' "' + t.textContent.trim().slice(0, 50) + '": ' + t.scrollWidth + ' px in ' + box);
    }
  });
  const p = document.createElement('pre');
  p.id = 'nicsim-width-probe';
  p.textContent = found.join('\\n');
  document.body.appendChild(p);
});
</script>"""


def browser():
    """The headless browser to measure with, or None."""
    return next((b for b in map(shutil.which, BROWSERS) if b), None)


def too_wide(page, tmp_path, width=1280):
    """What on `page` (an HTML file) is wider than a `width`-pixel window."""
    probed = tmp_path / "probed.html"
    probed.write_text(page.read_text() + PROBE)
    cmd = [browser(), "--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size={width},900",
           "--virtual-time-budget=10000", "--dump-dom", probed.as_uri()]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="nicsim-width-probe">(.*?)</pre>', r.stdout, re.S)
    assert found, f"the probe did not run: {r.stderr[-500:]}"
    return [line for line in html.unescape(found.group(1)).splitlines() if line]
