// A portal session's branding: the name, accent colour and logo its platform chose. Applied to
// the page's fixed header and to the colours every view uses (CSS custom properties), and undone
// on sign-out. The logo is the only image from another site the page may show (its CSP allows
// https:// images for it).

const DEFAULT_NAME = 'Hookline';
const DEFAULT_ICON = '/dashboard/icon.svg';
const ACCENT_PROPERTIES = ['--accent', '--accent-hover', '--accent-text', '--accent-soft', '--focus'];

/** The name the page goes by: the portal's brand, or Hookline's own. */
let currentName = DEFAULT_NAME;

export function brandName() {
  return currentName;
}

/**
 * Relative luminance of a #rrggbb colour (WCAG 2.x).
 * @param {string} hex
 */
function luminance(hex) {
  const [r, g, b] = [1, 3, 5].map((at) => {
    const channel = parseInt(hex.slice(at, at + 2), 16) / 255;
    return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/**
 * Black or white, whichever reads better on `hex` (the higher contrast ratio).
 * @param {string} hex
 */
export function textOn(hex) {
  const l = luminance(hex);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? '#111111' : '#ffffff';
}

/**
 * @param {import('./api.js').Branding | undefined} branding
 */
export function applyBranding(branding) {
  const brand = /** @type {HTMLElement} */ (document.querySelector('.brand'));
  const logo = /** @type {HTMLImageElement} */ (brand.querySelector('img'));
  const label = /** @type {HTMLElement} */ (brand.querySelector('span'));
  currentName = branding?.name ?? DEFAULT_NAME;
  label.textContent = currentName;
  if (branding?.logoUrl) {
    logo.src = branding.logoUrl;
    logo.alt = '';
    logo.classList.add('brand-logo');
  } else if (logo.classList.contains('brand-logo')) {
    logo.src = DEFAULT_ICON;
    logo.classList.remove('brand-logo');
  }
  const root = document.documentElement.style;
  const accent = branding?.accentColor;
  if (accent && /^#[0-9a-fA-F]{6}$/.test(accent)) {
    root.setProperty('--accent', accent);
    root.setProperty('--accent-hover', `color-mix(in srgb, ${accent} 82%, ${textOn(accent)})`);
    root.setProperty('--accent-text', textOn(accent));
    root.setProperty('--accent-soft', `color-mix(in srgb, ${accent} 14%, var(--surface))`);
    root.setProperty('--focus', accent);
  } else {
    for (const property of ACCENT_PROPERTIES) root.removeProperty(property);
  }
}
