// Marks each table that is wider than the page (see tabletop.css) and puts a hint above it, so a
// reader knows to scroll it sideways. Checked again when the window is resized.
(function () {
  function mark() {
    document.querySelectorAll(".table-wrapper").forEach(function (wrapper) {
      var wide = wrapper.scrollWidth > wrapper.clientWidth + 1;
      wrapper.classList.toggle("overflowing", wide);
      var hint = wrapper.previousElementSibling;
      var hasHint = hint && hint.classList.contains("wide-table-hint");
      if (wide && !hasHint) {
        hint = document.createElement("p");
        hint.className = "wide-table-hint";
        hint.textContent = "Wide table: scroll it sideways \u2192";
        wrapper.parentNode.insertBefore(hint, wrapper);
      } else if (!wide && hasHint) {
        hint.remove();
      }
    });
  }
  document.addEventListener("DOMContentLoaded", mark);
  window.addEventListener("resize", mark);
})();
