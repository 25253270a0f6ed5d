/* html_assets.h - the page's stylesheet and script (src/html/report.css,
 * src/html/report.js), turned into C strings at build time by embed.py so
 * they stay ordinary files that can be read and linted. */
#ifndef SP_HTML_ASSETS_H
#define SP_HTML_ASSETS_H

extern const char html_report_css[];
extern const char html_report_js[];

#endif /* SP_HTML_ASSETS_H */
