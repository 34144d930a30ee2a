from setuptools import setup
from configparser import ConfigParser
import setuptools, shlex

cfg = ConfigParser(delimiters=['='])
cfg.read('settings.ini', encoding='utf-8')
cfg = cfg['DEFAULT']

expected = ['version', 'description', 'keywords', 'author', 'author_email']
missing = [o for o in expected if o not in cfg]
if missing: raise ValueError(f"settings.ini is missing: {missing}")

licenses = {'apache2': ('Apache Software License 2.0', 'OSI Approved :: Apache Software License'),
            'mit': ('MIT License', 'OSI Approved :: MIT License')}
statuses = ['Planning', 'Pre-Alpha', 'Alpha', 'Beta', 'Production/Stable', 'Mature', 'Inactive']
py_versions = '3.9 3.10 3.11 3.12 3.13'.split()

lic = licenses.get(cfg['license'].lower(), (cfg['license'], None))
min_python = cfg['min_python']
requirements = shlex.split(cfg.get('requirements', ''))
if cfg.get('pip_requirements'): requirements += shlex.split(cfg.get('pip_requirements', ''))
dev_requirements = shlex.split(cfg.get('dev_requirements', ''))
slurm_requirements = shlex.split(cfg.get('slurm_requirements', ''))   # jacmargin run --executor slurm
console_scripts = shlex.split(cfg.get('console_scripts', ''))

setuptools.setup(
    name=cfg['lib_name'],
    license=lic[0],
    classifiers=['Development Status :: ' + statuses[int(cfg['status'])],
                 'Intended Audience :: ' + cfg['audience'].title(),
                 'Natural Language :: ' + cfg['language'].title()]
                + ['Programming Language :: Python :: ' + o for o in py_versions[py_versions.index(min_python):]]
                + (['License :: ' + lic[1]] if lic[1] else []),
    url=cfg['git_url'],
    packages=setuptools.find_packages(),
    include_package_data=True,
    install_requires=requirements,
    extras_require={'dev': dev_requirements, 'slurm': slurm_requirements},
    dependency_links=cfg.get('dep_links', '').split(),
    python_requires='>=' + cfg['min_python'],
    long_description=open('README.md', encoding='utf-8').read(),
    long_description_content_type='text/markdown',
    zip_safe=False,
    entry_points={'console_scripts': console_scripts,
                  'nbdev': [f'{cfg.get("lib_path")}={cfg.get("lib_path")}._modidx:d']},
    **{k: cfg[k] for k in ['version', 'description', 'keywords', 'author', 'author_email']})
