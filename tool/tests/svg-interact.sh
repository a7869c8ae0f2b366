#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# svg-interact.sh SVG FRAME SEARCH - drive a cycread flame graph in headless
# Chromium: hover FRAME, click it (zoom), search SEARCH, and print what the
# page then shows: the details line, the zoomed frame's width, the matched
# share and the number of highlighted frames.  Exit 77 without Chromium.

set -eu
svg=$1
frame=$2
pattern=$3
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || exit 77
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the probe runs after the page's own load handler (registered first)
sed '$d' "$svg" >"$tmp/probe.svg"
cat >>"$tmp/probe.svg" <<PROBE
<script type="text/ecmascript"><![CDATA[
window.addEventListener('load', function () {
  var g = Array.prototype.filter.call(document.querySelectorAll('g.f'), function (x) {
    return x.getAttribute('data-n') === '$frame';
  })[0];
  var out = 'found=' + (g ? 1 : 0);
  if (g) {
    g.dispatchEvent(new MouseEvent('mouseover'));
    out += '|details=' + document.getElementById('details').textContent;
    g.dispatchEvent(new MouseEvent('click'));
    out += '|width=' + g.getElementsByTagName('rect')[0].getAttribute('width');
    out += '|reset=' + document.getElementById('reset').style.opacity;
    search('$pattern');
    out += '|' + document.getElementById('matched').textContent;
    out += '|hits=' + document.querySelectorAll('g.hit').length;
  }
  document.documentElement.setAttribute('data-probe', out);
});
]]></script>
</svg>
PROBE
timeout 60 "$browser" --headless --no-sandbox --disable-gpu --virtual-time-budget=3000 \
	--dump-dom "file://$tmp/probe.svg" 2>/dev/null | grep -o 'data-probe="[^"]*"'
