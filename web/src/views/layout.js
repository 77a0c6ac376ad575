/** Which side panel is open on a narrow screen: the header's and the sidebar's buttons open and
 * close them, and the app lays itself out by them. */
export const layout = { left: false, right: false };
