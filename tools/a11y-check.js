// An accessibility check over the DOM of the page it runs in (what axe-core's rules for
// these would say, for the pages the viewer makes): WCAG 2.2 AA text contrast, a name for
// every control, no positive tabindex, images with alternative text, the document's
// language and title, one main landmark and a first-level heading. Evaluated by
// tools/browser-keys.py through the DevTools protocol; returns a list of problems, each
// naming the element and the rule, empty when the page passes.
(function () {
  const problems = [];
  function describe(el) {
    let text = el.tagName.toLowerCase();
    if (el.id) text += "#" + el.id;
    if (el.className && typeof el.className === "string") text += "." + el.className.trim().split(/\s+/).join(".");
    const label = (el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 40);
    return label ? text + " \"" + label + "\"" : text;
  }
  function visible(el) {
    if (el.closest("[hidden]")) return false;
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden") return false;
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0;
  }
  // The accessible name, as far as these pages need it (accname 1.2's main steps).
  function accessibleName(el) {
    const labelledBy = el.getAttribute("aria-labelledby");
    if (labelledBy) {
      const text = labelledBy.split(/\s+/).map(id => document.getElementById(id)).filter(Boolean)
        .map(node => node.textContent.trim()).join(" ").trim();
      if (text) return text;
    }
    const aria = (el.getAttribute("aria-label") || "").trim();
    if (aria) return aria;
    if (el.labels && el.labels.length) {
      const text = Array.prototype.map.call(el.labels, l => l.textContent.trim()).join(" ").trim();
      if (text) return text;
    }
    if (el.tagName === "INPUT" && ["submit", "button", "reset"].includes(el.type) && el.value.trim()) return el.value.trim();
    if (el.tagName === "IMG") return (el.getAttribute("alt") || "").trim();
    if (!["INPUT", "SELECT", "TEXTAREA"].includes(el.tagName)) {
      let text = "";
      el.childNodes.forEach(node => {
        if (node.nodeType === Node.TEXT_NODE) text += node.textContent;
        else if (node.nodeType === Node.ELEMENT_NODE && !node.hasAttribute("aria-hidden")) text += " " + accessibleName(node);
      });
      if (text.trim()) return text.trim();
    }
    return (el.getAttribute("title") || "").trim();
  }

  if (!(document.documentElement.getAttribute("lang") || "").trim()) problems.push("html: no lang attribute");
  if (!document.title.trim()) problems.push("document: empty title");
  if (document.querySelectorAll("main, [role=main]").length !== 1) problems.push("document: not exactly one main landmark");
  if (!document.querySelector("h1")) problems.push("document: no h1");

  const controls = document.querySelectorAll("a[href], button, input:not([type=hidden]), select, textarea, [tabindex], [role=button], [role=link], [role=slider]");
  controls.forEach(el => {
    const tabindex = el.getAttribute("tabindex");
    if (tabindex !== null && +tabindex > 0) problems.push(describe(el) + ": positive tabindex " + tabindex);
    if (!visible(el) && !(el.tagName === "INPUT" && el.labels && el.labels.length)) return;
    if (!accessibleName(el)) problems.push(describe(el) + ": a control with no name");
    const name = accessibleName(el);
    if (name && /^[^A-Za-z0-9]+$/.test(name) && !el.getAttribute("aria-label")) {
      problems.push(describe(el) + ": named only by symbols (\"" + name + "\")");
    }
  });
  document.querySelectorAll("img").forEach(img => {
    if (!img.hasAttribute("alt")) problems.push(describe(img) + ": an image with no alt");
  });

  // Contrast: each visible element with text of its own, against the first opaque
  // background behind it (the page's white where none is set).
  function rgba(text) {
    const m = text.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const parts = m[1].split(",").map(p => parseFloat(p));
    return { r: parts[0], g: parts[1], b: parts[2], a: parts.length > 3 ? parts[3] : 1 };
  }
  function luminance(c) {
    const channel = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b);
  }
  function blend(top, bottom) {
    const a = top.a;
    return { r: top.r * a + bottom.r * (1 - a), g: top.g * a + bottom.g * (1 - a), b: top.b * a + bottom.b * (1 - a), a: 1 };
  }
  function background(el) {
    const layers = [];
    for (let node = el; node && node.nodeType === Node.ELEMENT_NODE; node = node.parentElement) {
      const style = getComputedStyle(node);
      if (style.backgroundImage && style.backgroundImage !== "none") return null;  // cannot tell: skipped
      const color = rgba(style.backgroundColor);
      if (color && color.a > 0) {
        layers.push(color);
        if (color.a >= 1) break;
      }
    }
    let result = { r: 255, g: 255, b: 255, a: 1 };
    for (let i = layers.length - 1; i >= 0; i--) result = blend(layers[i], result);
    return result;
  }
  let checkedText = 0;
  document.querySelectorAll("body *").forEach(el => {
    const ownText = Array.prototype.some.call(el.childNodes, node => node.nodeType === Node.TEXT_NODE && node.textContent.trim());
    if (!ownText || !visible(el)) return;
    // Text of a control that is off has no contrast requirement (WCAG 1.4.3's exception
    // for inactive components; axe skips them too): the extension's drawn buttons.
    if (el.closest(":disabled, [aria-disabled=true]")) return;
    const style = getComputedStyle(el);
    const back = background(el);
    const front = rgba(style.color);
    if (!back || !front) return;
    const color = blend({ ...front, a: front.a * parseFloat(style.opacity || "1") }, back);
    const [l1, l2] = [luminance(color), luminance(back)].sort((a, b) => b - a);
    const ratio = (l1 + 0.05) / (l2 + 0.05);
    const size = parseFloat(style.fontSize), bold = parseInt(style.fontWeight, 10) >= 700;
    const needed = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    checkedText += 1;
    if (ratio < needed) problems.push(describe(el) + ": contrast " + ratio.toFixed(2) + ":1, needs " + needed + ":1");
  });
  if (checkedText === 0) problems.push("document: no text was checked for contrast");
  return { problems: problems, controls: controls.length, texts: checkedText };
})()
