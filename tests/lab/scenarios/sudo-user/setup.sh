# Runs inside the node: the users exist only in this node's /etc and /home overlays.
# Password field "*": no password login, but not "locked" ("!"), which sshd without PAM
# would refuse even for public-key logins.
useradd --create-home --shell /bin/bash --password '*' --comment "dnsfix lab deploy user" dnsfixlab
useradd --create-home --shell /bin/bash --password '*' --comment "dnsfix lab user, sudo needs a password" dnsfixpw
chmod 0440 /etc/sudoers.d/dnsfixlab /etc/sudoers.d/dnsfixpw
chown root:root /etc/sudoers.d/dnsfixlab /etc/sudoers.d/dnsfixpw
